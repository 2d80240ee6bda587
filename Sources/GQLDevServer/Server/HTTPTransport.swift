import Foundation
import GQLCore
import Hummingbird
import Logging

/// Serves GraphQL over HTTP: POST with a JSON body (one request or a batch), GET with query parameters.
///
/// Status codes: 200 for every executed request, GraphQL errors included; 400 for a malformed request;
/// 401 for missing or wrong credentials; 405 for a mutation over GET; 413 for a body over
/// ``GQLDevServer/Configuration/maxBodyBytes``; 500 for POSTs failed by fault injection. Every body is JSON.
struct HTTPTransport: Sendable {
    let engine: any DevExecutor
    let authenticator: DevAuthenticator
    let faults: FaultInjector
    let maxBodyBytes: Int
    let logger: Logger

    func post(_ request: Request) async -> Response {
        var request = request
        await faults.delay()
        guard authenticator.authorizes(DevAuthenticator.Credentials(headers: request.headers)) else {
            return Self.unauthorized()
        }
        if faults.shouldFailPOST() {
            logger.debug("GQLDevServer fails a POST with 500 (fault injection)")
            return Self.error(.internalServerError, "Injected fault: the server failed this request on purpose.")
        }
        if let length = request.headers[.contentLength].flatMap({ Int($0) }), length > maxBodyBytes {
            return Self.tooLarge(maxBodyBytes)
        }
        let body: ByteBuffer
        do {
            body = try await request.collectBody(upTo: maxBodyBytes)
        } catch let error as HTTPResponseError where error.status == .contentTooLarge {
            return Self.tooLarge(maxBodyBytes)
        } catch {
            return Self.error(.badRequest, "The body could not be read: \(error)")
        }
        switch HTTPRequestDecoder.decodeBody(Data(body.readableBytesView)) {
        case .failure(let failure):
            return Self.error(.badRequest, failure.message)
        case .success(.single(let graphQLRequest)):
            return Self.respond(await run(graphQLRequest, overGET: false))
        case .success(.batch(let requests)):
            var responses: [GQLValue] = []
            for graphQLRequest in requests {
                switch await run(graphQLRequest, overGET: false) {
                case .success(let response): responses.append(response)
                case .failure(let failure): return Self.error(failure.status, failure.message)
                }
            }
            return Self.json(.ok, .array(responses))
        }
    }

    func get(_ request: Request) async -> Response {
        await faults.delay()
        guard authenticator.authorizes(DevAuthenticator.Credentials(headers: request.headers)) else {
            return Self.unauthorized()
        }
        let parameters = request.uri.queryParameters
        let decoded = HTTPRequestDecoder.decodeQuery(
            query: parameters["query"].map(String.init),
            variables: parameters["variables"].map(String.init),
            operationName: parameters["operationName"].map(String.init)
        )
        switch decoded {
        case .failure(let failure): return Self.error(.badRequest, failure.message)
        case .success(let graphQLRequest): return Self.respond(await run(graphQLRequest, overGET: true))
        }
    }

    /// A request refused before execution, with its HTTP status.
    private struct Refusal: Error {
        let status: HTTPResponse.Status
        let message: String
    }

    /// Runs one request: queries and mutations; subscriptions are answered with a GraphQL error.
    private func run(_ request: DevEngine.Request, overGET: Bool) async -> Result<GQLValue, Refusal> {
        switch try? engine.operationKind(request) {
        case .mutation? where overGET:
            return .failure(Refusal(status: .methodNotAllowed, message: "Mutations must be sent with POST."))
        case .subscription?:
            let message = "Subscriptions are served over WebSocket (graphql-transport-ws, graphql-ws or AppSync)."
            return .success(["errors": [["message": .string(message)]]])
        default:
            return .success(await engine.execute(request, style: .standard))
        }
    }

    private static func respond(_ result: Result<GQLValue, Refusal>) -> Response {
        switch result {
        case .success(let response): return json(.ok, response)
        case .failure(let refusal):
            var response = error(refusal.status, refusal.message)
            if refusal.status == .methodNotAllowed { response.headers[.allow] = "POST" }
            return response
        }
    }

    static func unauthorized() -> Response {
        error(.unauthorized, "Unauthorized: missing or invalid x-api-key or x-hasura-admin-secret.")
    }

    static func tooLarge(_ limit: Int) -> Response {
        error(.contentTooLarge, "The request body is larger than \(limit) bytes.")
    }

    /// A JSON error body in GraphQL's shape, with the HTTP status as `extensions.status`.
    static func error(_ status: HTTPResponse.Status, _ message: String) -> Response {
        let body: GQLValue = [
            "errors": [["message": .string(message), "extensions": ["status": .int(Int64(status.code))]]]
        ]
        return json(status, body)
    }

    static func json(_ status: HTTPResponse.Status, _ value: GQLValue) -> Response {
        let text = (try? value.jsonString()) ?? #"{"errors":[{"message":"The response could not be encoded."}]}"#
        return Response(
            status: status,
            headers: [.contentType: "application/json; charset=utf-8"],
            body: ResponseBody(byteBuffer: ByteBuffer(string: text))
        )
    }
}
