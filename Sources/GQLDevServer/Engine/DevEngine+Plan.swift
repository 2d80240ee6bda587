import GQLCore
import GraphQL

extension DevEngine {
    /// Runs `prepared` by its compiled plan, straight on the model stores; `nil` when the executor must run it
    /// instead (a variable or argument the plan is not certain about), decided before anything is read or written.
    ///
    /// Everything the executor does holds here: variables coerced (their errors are the executor's), the same
    /// resolver code (``ModelResolvers/get(_:key:budget:)``, ``ModelResolvers/mutate(_:_:input:condition:)``) with
    /// the same located errors, the budget charged the same, scalars serialized by the schema's own scalars,
    /// non-null fields nulling their item, mutations one after another.
    func run(_ plan: OperationPlan, _ prepared: Prepared, formatter: ResponseFormatter, budget: ResponseBudget) async
        -> Response?
    {
        guard let arguments = Self.arguments(of: plan, variables: prepared.request.variables) else { return nil }
        var items: [Result<FieldAnswer, any Error>] = []
        items.reserveCapacity(plan.fields.count)
        for (field, args) in zip(plan.fields, arguments) {
            if case .mutate(let verb, let store) = field.action {
                do {
                    items.append(
                        .success(
                            .item(
                                try await ModelResolvers.mutate(
                                    verb, store, input: args["input"], condition: args["condition"]))))
                } catch {
                    items.append(.failure(error))
                }
            } else {
                items.append(Result { try Self.read(field, args, budget: budget) })
            }
        }
        return Response(json: Self.response(plan, items, formatter: formatter).text)
    }

    /// What ``runNow(_:_:formatter:budget:)`` gives.
    enum NowOutcome: Sendable {
        /// The whole response, computed (and a mutation committed) on the caller's thread, as its JSON's bytes
        /// (for a transport to copy into its output as they are).
        case response(ResponseJSON)
        /// A mutation that the caller's thread could not commit now, to be queued on `writes` (the engine's
        /// ``WriteQueue``); `response` turns its answer or error into the response.
        case queued(
            writes: WriteQueue, mutation: ModelStore.Mutation,
            response: @Sendable (Result<GQLValues, any Error>) -> Response)
    }

    /// ``run(_:_:formatter:budget:)`` on the caller's thread, a mutation committed there too when the writer is
    /// free: for a transport that answers on its connection's event loop. When the engine's mutations are being
    /// committed in groups off the loop, or another thread holds the writer, or `commitHere` is false, the
    /// mutation comes back `.queued`, nothing written, for the caller to queue (the event loop does not wait for
    /// the writer). `nil`, with
    /// nothing read or written, when the executor must run it or it holds more than one mutation.
    func runNow(
        _ plan: OperationPlan, _ prepared: Prepared, formatter: ResponseFormatter, budget: ResponseBudget,
        commitHere: Bool = true
    ) -> NowOutcome? {
        guard plan.fields.count(where: \.mutates) <= 1,
            let arguments = Self.arguments(of: plan, variables: prepared.request.variables)
        else { return nil }
        var items: [Result<FieldAnswer, any Error>] = []
        items.reserveCapacity(plan.fields.count)
        var queued: (index: Int, store: ModelStore, mutation: ModelStore.Mutation)?
        for (field, args) in zip(plan.fields, arguments) {
            guard case .mutate(let verb, let store) = field.action else {
                // In a mutation, the other root fields can only be `__typename`: nothing is read after a write.
                items.append(Result { try Self.read(field, args, budget: budget) })
                continue
            }
            do {
                let mutation = try ModelResolvers.mutation(
                    verb, store, input: args["input"], condition: args["condition"])
                if commitHere, let item = try store.commitNow(mutation) {
                    items.append(.success(.item(item)))
                } else {
                    queued = (items.count, store, mutation)
                    items.append(.success(.item(nil)))
                }
            } catch {
                items.append(.failure(error))
            }
        }
        guard let queued else { return .response(Self.response(plan, items, formatter: formatter)) }
        let before = items
        return .queued(writes: queued.store.writes, mutation: queued.mutation) { result in
            var items = before
            items[queued.index] = result.map { .item($0) }
            return Response(json: Self.response(plan, items, formatter: formatter).text)
        }
    }

    /// What a root field answered, for ``response(_:_:formatter:)``.
    enum FieldAnswer {
        /// An item to write (`nil`: null).
        case item(GQLValues?)
        /// The field's value already written (a `getT`, straight from its row), with the errors of its fields.
        case written(ResponseJSON, [GraphQLError])
    }

    /// A root field that reads: its item (`nil`: null) or its value written, charged to `budget`.
    private static func read(_ field: OperationPlan.RootField, _ args: GQLValues, budget: ResponseBudget) throws
        -> FieldAnswer
    {
        switch field.action {
        case .typename: return .item(nil)
        case .get(let source): return try written(field, source, key: args[source.store.model.key], budget: budget)
        case .page(let store, let sync): return .item(try ModelResolvers.page(store, args, sync: sync, budget: budget))
        case .mutate: return .item(nil)  // run by the callers, which decide the thread
        }
    }

    /// The response of `plan` for its root fields' answers in order (an error is located at its field).
    private static func response(
        _ plan: OperationPlan, _ items: [Result<FieldAnswer, any Error>], formatter: ResponseFormatter
    ) -> ResponseJSON {
        var out = ResponseJSON()
        var errors: [GraphQLError] = []
        out.raw(static: #"{"data":{"#)
        for (n, (field, result)) in zip(plan.fields, items).enumerated() {
            if n > 0 { out.raw(ascii: UInt8(ascii: ",")) }
            out.raw(field.keyJSON)
            if case .typename(let name) = field.action {
                out.string(name)
                continue
            }
            switch result {
            case .success(.item(let item?)):
                object(item, field.outputs, path: { [field.key] }, errors: &errors, into: &out)
            case .success(.item(nil)):
                out.raw(static: "null")
            case .success(.written(let value, let fieldErrors)):
                out.append(value)
                if !fieldErrors.isEmpty { errors.append(contentsOf: fieldErrors) }  // most often none: no call
            case .failure(let error):
                errors.append(ResolverError.located(error, nodes: [field.node], path: [field.key]))
                out.raw(static: "null")
            }
        }
        out.raw(ascii: UInt8(ascii: "}"))
        out.errors(errors, formatter, afterData: true)
        out.raw(ascii: UInt8(ascii: "}"))
        return out
    }

    /// Every root field's arguments as its resolver sees them, or `nil` when a variable or argument is not one
    /// ``InputCoercion`` is certain about. The executor coerces every declared variable, used or not.
    private static func arguments(of plan: OperationPlan, variables given: GQLValues) -> [GQLValues]? {
        var variables = GQLValues(minimumCapacity: plan.variables.count)
        for variable in plan.variables {
            var input = given[variable.name]
            if input == nil, let fallback = variable.defaultValue { input = fallback.resolve([:]) }
            guard case .value(let coerced) = InputCoercion.coerce(input, type: variable.type) else { return nil }
            if let coerced { variables[variable.name] = coerced }
        }
        var arguments: [GQLValues] = []
        arguments.reserveCapacity(plan.fields.count)
        for field in plan.fields {
            var args = GQLValues(minimumCapacity: field.arguments.count)
            for argument in field.arguments {
                let value = argument.source?.resolve(variables)
                guard case .value(let coerced) = InputCoercion.coerce(value, type: argument.type) else { return nil }
                if let coerced { args[argument.name] = coerced }
            }
            arguments.append(args)
        }
        return arguments
    }

    /// Writes the item's selected fields to `out` as a JSON object in selection order, or `null` (the item is
    /// null) when a non-null field is null or cannot be serialized, its error recorded as the executor records it.
    /// Nested objects are written into the same text, so an answer is one string however deep it is.
    static func object(
        _ item: GQLValues, _ outputs: [OperationPlan.OutputField], path: () -> [any IndexPathElement],
        errors: inout [GraphQLError], into out: inout ResponseJSON
    ) {
        let start = out.mark
        guard writeObject(item, outputs, path: path, errors: &errors, into: &out) else {
            out.rewind(to: start)
            return out.raw("null")
        }
    }

    /// ``object(_:_:path:errors:into:)``'s members; `false` when the item is null, with part of it written.
    private static func writeObject(
        _ item: GQLValues, _ outputs: [OperationPlan.OutputField], path: () -> [any IndexPathElement],
        errors: inout [GraphQLError], into out: inout ResponseJSON
    ) -> Bool {
        out.raw("{")
        for (n, output) in outputs.enumerated() {
            if n > 0 { out.raw(",") }
            out.raw(output.keyJSON)
            guard member(output, { item[$0] }, path: path, errors: &errors, into: &out) else { return false }
        }
        out.raw("}")
        return true
    }

    /// Writes one member's value (its key already written) as ``writeObject(_:_:path:errors:into:)`` does, its
    /// stored value `value(name)` (`nil`: the item has no such member); `false` when it makes the item null.
    static func member(
        _ output: OperationPlan.OutputField, _ value: (String) -> GQLValue?, path: () -> [any IndexPathElement],
        errors: inout [GraphQLError], into out: inout ResponseJSON
    ) -> Bool {
        switch output.value {
        case .typename(let name):
            out.string(name)
        case .objects(let name, let type, let inner):
            guard case .array(let elements)? = value(name) else {
                errors.append(GraphQLError(message: "Cannot return null for non-nullable field \(type).\(name)."))
                return false
            }
            out.raw("[")
            for (index, element) in elements.enumerated() {
                if index > 0 { out.raw(",") }
                if let member = element.objectValue {
                    object(member, inner, path: { path() + [output.key, index] }, errors: &errors, into: &out)
                } else {
                    out.raw("null")
                }
            }
            out.raw("]")
        case .column(let name, let type, let scalar, let nonNull):
            let raw = value(name) ?? .null
            let serialized: GQLValue
            if raw.isNull {
                guard !nonNull else {
                    errors.append(GraphQLError(message: "Cannot return null for non-nullable field \(type).\(name)."))
                    return false
                }
                serialized = .null
            } else {
                // The field's node is copied (a struct of the parsed document) only for an error.
                switch serialize(raw, scalar, node: output.node, path: IndexPath(path() + [output.key])) {
                case .success(let value):
                    serialized = value
                case .failure(let error):
                    errors.append(error)
                    guard !nonNull else { return false }
                    serialized = .null
                }
            }
            do {
                try out.value(serialized)
            } catch {
                out.raw("null")
            }
        }
        return true
    }

    /// A stored value as the executor completes it: the common kinds directly, every other through the schema's
    /// own scalar (which gives the executor's value or error).
    private static func serialize(
        _ value: GQLValue, _ scalar: OperationPlan.Scalar, node: @autoclosure () -> Field,
        path: @autoclosure () -> IndexPath
    ) -> Result<GQLValue, GraphQLError> {
        switch (scalar.kind, value) {
        case (.string, .string), (.id, .string), (.boolean, .bool), (.awsDateTime, .string), (.awsJSON, .string),
            (.awsTimestamp, .int):
            return .success(value)
        case (.int, .int(let i)) where Int64(Int32.min) <= i && i <= Int64(Int32.max):
            return .success(value)
        case (.float, .double(let d)) where d.isFinite:
            return .success(value)
        default:
            // The executor hands the scalar what the resolver returned: the plain Swift value.
            guard let native = MapConversion.native(value) else { return .success(.null) }
            do {
                let map = try scalar.type.serialize(value: native)
                return .success(MapConversion.value(map) ?? .null)
            } catch let error as GraphQLError {
                return .failure(error)
            } catch {
                return .failure(GraphQLError(message: String(describing: error), nodes: [node()], path: path()))
            }
        }
    }
}
