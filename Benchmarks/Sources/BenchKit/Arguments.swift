/// A benchmark's command line, read one argument at a time: `while let argument = arguments.next() { switch … }`,
/// with the value of an option taken by `value(for:)`, `number(for:)` or `list(for:)`. Every mistake is a
/// ``BenchError`` that names the option.
public struct Arguments {
    private var remaining: ArraySlice<String>

    public init(_ arguments: ArraySlice<String>) {
        remaining = arguments
    }

    /// The next argument, or nil at the end.
    public mutating func next() -> String? {
        remaining.popFirst()
    }

    /// The value that follows `option`.
    public mutating func value(for option: String) throws -> String {
        guard let value = remaining.popFirst() else { throw BenchError("\(option) needs a value") }
        return value
    }

    /// The positive whole number that follows `option`.
    public mutating func number(for option: String) throws -> Int {
        let text = try value(for: option)
        guard let number = Int(text), number > 0 else {
            throw BenchError("\(option) needs a positive number, not \(text)")
        }
        return number
    }

    /// The comma-separated names that follow `option`, each one of `allowed`.
    public mutating func list(for option: String, allowed: Set<String>) throws -> Set<String> {
        let names = Set(try value(for: option).split(separator: ",").map(String.init))
        let unknown = names.subtracting(allowed)
        guard unknown.isEmpty else {
            throw BenchError("\(option) takes \(allowed.sorted().joined(separator: ", ")), not \(unknown.sorted())")
        }
        return names
    }
}
