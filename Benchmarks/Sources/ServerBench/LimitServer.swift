import Foundation
import Hummingbird
import Logging
import NIOCore

/// The physical limit beside the GraphQL servers: a bare Hummingbird route on the same HTTP stack GQLDevServer is
/// built on, with no GraphQL at all. It reads each POST body and answers with fixed bytes of the same shape as the
/// servers' answers (`createObjects` when the body names it, `getObjects` otherwise), so every figure can be read
/// as a share of what loopback HTTP on this machine allows. Run as a child process (`ServerBench --limit`).
enum LimitServer {
    /// The answer to every query: what GQLDevServer answers for `seed-0`.
    static let queryAnswer =
        #"{"data":{"getObjects":{"objectId":"seed-0","text":"benchmark","number":0,"double":null,"boolean":true}}}"#
    /// The answer to every mutation.
    static let mutationAnswer = #"{"data":{"createObjects":{"objectId":"limit","text":"benchmark","number":0}}}"#

    static func serve() async throws {
        let query = ByteBuffer(string: queryAnswer)
        let mutation = ByteBuffer(string: mutationAnswer)
        let marker = Array("createObjects".utf8)
        let router = Router()
        router.post("/graphql") { request, _ -> Response in
            let body = try await request.body.collect(upTo: 1 << 20)
            let isMutation =
                body.readableBytesView.withContiguousStorageIfAvailable { bytes in
                    bytes.firstRange(of: marker) != nil
                } ?? false
            return Response(
                status: .ok, headers: [.contentType: "application/json"],
                body: .init(byteBuffer: isMutation ? mutation : query))
        }
        let logger = Logger(label: "ServerBench.limit", factory: { _ in SwiftLogNoOpLogHandler() })
        let application = Application(
            router: router,
            configuration: .init(address: .hostname("127.0.0.1", port: 0), serverName: "limit"),
            onServerRunning: { channel in
                let port = channel.localAddress?.port ?? 0
                FileHandle.standardOutput.write(
                    Data("HTTP      http://127.0.0.1:\(port)/graphql\nWebSocket ws://127.0.0.1:\(port)/graphql\n".utf8))
            },
            logger: logger)
        try await application.runService()
    }
}
