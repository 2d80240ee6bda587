import GQLCore
import HummingbirdWebSocket
import Logging

/// Sends JSON messages on one WebSocket, from any number of tasks, and closes it once.
///
/// Each message is one text frame, so messages from concurrent operations never interleave. The writer
/// counts what it sent to apply ``GQLDevServer/Faults/dropWebSocketsAfter``: after that many messages it
/// closes the socket with 1011. After a close, further messages are dropped.
actor SocketWriter {
    private let outbound: WebSocketOutboundWriter
    private let dropAfter: Int?
    private let logger: Logger
    private var sent = 0
    private(set) var isClosed = false

    init(_ outbound: WebSocketOutboundWriter, dropAfter: Int?, logger: Logger) {
        self.outbound = outbound
        self.dropAfter = dropAfter
        self.logger = logger
    }

    /// Sends `message` as JSON text; does nothing once the socket is closed.
    func send(_ message: GQLValue) async {
        guard !isClosed else { return }
        do {
            await send(json: try message.jsonString())
        } catch {
            logger.error("GQLDevServer could not encode a WebSocket message: \(error)")
        }
    }

    /// Sends the JSON `text` as one message; does nothing once the socket is closed.
    func send(json text: String) async {
        guard !isClosed else { return }
        sent += 1
        let dropsNow = dropAfter.map { sent >= $0 } ?? false
        if dropsNow { isClosed = true }
        do {
            try await outbound.write(.text(text))
        } catch {
            logger.debug("GQLDevServer WebSocket write failed: \(error)")
        }
        if dropsNow {
            logger.debug("GQLDevServer drops a WebSocket after \(sent) messages (fault injection)")
            try? await outbound.close(.unexpectedServerError, reason: "Dropped by fault injection")
        }
    }

    /// Closes the socket with `code` (a WebSocket close code such as 1001 or 4400) unless it is closed already.
    func close(code: Int, reason: String) async {
        guard !isClosed else { return }
        isClosed = true
        logger.debug("GQLDevServer closes a WebSocket: \(code) \(reason)")
        try? await outbound.close(.init(codeNumber: code), reason: reason)
    }

    /// Sends `{"type":"ka"}` now and every `interval` until the returned task is cancelled (graphql-ws and
    /// AppSync keep-alives).
    nonisolated func keepAlive(every interval: Duration) -> Task<Void, Never> {
        Task {
            await send(["type": "ka"])
            while !Task.isCancelled {
                do { try await Task.sleep(for: interval) } catch { return }
                await send(["type": "ka"])
            }
        }
    }
}
