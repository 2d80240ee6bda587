import AsyncHTTPClient
import BenchKit
import Foundation
import GQLNet
import NIOCore

/// The raw contender: AsyncHTTPClient, the body built by hand, the answer decoded into a value and checked.
///
/// With `--diagnose`, variants add one of the steps `GQLServer.send` takes beyond that: its HTTP client
/// configuration (response decompression, `Accept-Encoding: gzip, deflate`), the race of every request against a
/// sleeping timeout task in a task group, and the body encoded from a `GQLValue` with the answer collected chunk by
/// chunk into a `[UInt8]` and copied into `Data` for the parser.
struct RawHTTP: Sendable {
    enum Parser { case gqlValue, foundation }

    let url: String
    let client: HTTPClient
    let gqlServerConfiguration: Bool
    /// `{"query":"…","variables":{"id":` with the query JSON-escaped once.
    let prefix: String

    init(url: String, gqlServerConfiguration: Bool) {
        self.url = url
        self.gqlServerConfiguration = gqlServerConfiguration
        var configuration = HTTPClient.Configuration()
        if gqlServerConfiguration {
            // What GQLServer.Configuration().httpClientConfiguration sets.
            configuration.timeout = .init(connect: .seconds(10))
            configuration.decompression = .enabled(limit: .size(1 << 24))
        }
        self.client = HTTPClient(eventLoopGroupProvider: .singleton, configuration: configuration)
        let quoted = (try? GQLValue.string(QueryLoad.query).jsonString()) ?? "\"\""
        self.prefix = #"{"query":"# + quoted + #","variables":{"id":"#
    }

    /// The request body for `key` (plain ASCII keys, so quoting is enough).
    func body(_ key: String) -> String { prefix + "\"" + key + "\"}}" }

    func query(_ key: String, parser: Parser = .gqlValue, timeoutRace: Bool = false, valueBody: Bool = false) async
        -> Bool
    {
        var request = HTTPClientRequest(url: url)
        request.method = .POST
        request.headers.add(name: "Content-Type", value: "application/json")
        request.headers.add(name: "Accept", value: "application/graphql-response+json, application/json")
        if gqlServerConfiguration { request.headers.add(name: "Accept-Encoding", value: "gzip, deflate") }
        do {
            if valueBody {
                let value = GQLValue.object(["query": .string(QueryLoad.query), "variables": ["id": .string(key)]])
                request.body = .bytes(Array(try value.jsonData()))
            } else {
                request.body = .bytes(ByteBuffer(string: body(key)))
            }
            let request = request
            let exchange: @Sendable () async throws -> (Int, Data) = {
                let response = try await client.execute(request, timeout: .seconds(30))
                if valueBody {
                    var bytes: [UInt8] = []
                    for try await chunk in response.body { bytes.append(contentsOf: chunk.readableBytesView) }
                    return (Int(response.status.code), Data(bytes))
                }
                let buffer = try await response.body.collect(upTo: 1 << 24)
                return (Int(response.status.code), Data(buffer.readableBytesView))
            }
            let (status, data): (Int, Data)
            if timeoutRace {
                // GQLServer.exchange: the request raced against a 30 s sleep, the loser cancelled.
                (status, data) = try await withThrowingTaskGroup(of: (Int, Data).self) { group in
                    group.addTask { try await exchange() }
                    group.addTask {
                        try await Task.sleep(for: .seconds(30))
                        throw BenchError("timeout")
                    }
                    defer { group.cancelAll() }
                    guard let first = try await group.next() else { throw CancellationError() }
                    return first
                }
            } else {
                (status, data) = try await exchange()
            }
            guard status == 200 else { return false }
            switch parser {
            case .gqlValue:
                let value = try GQLValue(json: data)
                // The whole document: `data` alone (no `errors`), holding `getObjects` alone, the seeded object.
                return value.objectValue?.count == 1 && value["data"]?.objectValue?.count == 1
                    && QueryLoad.isSeeded(value["data"]?["getObjects"], key)
            case .foundation:
                guard let object = try JSONSerialization.jsonObject(with: data) as? [String: Any], object.count == 1,
                    let payload = object["data"] as? [String: Any], payload.count == 1,
                    let item = payload["getObjects"] as? [String: Any]
                else { return false }
                return QueryLoad.isSeeded(item, key)
            }
        } catch {
            return false
        }
    }
}
