import GQLCore
import NIOCore
import NIOEmbedded
import NIOWebSocket
import Testing

@testable import GQLNet

/// ``WebSocketFrameHandler``'s back-pressure on an `EmbeddedChannel`, with the network's pace in the test's hands:
/// a head handler holds every write until released (the server does not read), and writability is set by hand.
@Suite("WebSocket frame handler back-pressure")
struct WebSocketFrameHandlerTests {
    /// Holds writes and their promises, as a socket whose peer does not read.
    final class StalledWrites: ChannelOutboundHandler, @unchecked Sendable {
        // Safety: used on the embedded channel's loop only (the test's thread).
        typealias OutboundIn = WebSocketFrame
        typealias OutboundOut = WebSocketFrame
        var held: [(WebSocketFrame, EventLoopPromise<Void>?)] = []
        var context: ChannelHandlerContext?

        func handlerAdded(context: ChannelHandlerContext) { self.context = context }

        func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
            held.append((unwrapOutboundIn(data), promise))
        }

        func flush(context: ChannelHandlerContext) {}

        /// Lets the held writes through, completing their promises.
        func release() {
            let writes = held
            held.removeAll()
            for (frame, promise) in writes { context?.writeAndFlush(wrapOutboundOut(frame), promise: promise) }
        }
    }

    /// Counts the reads that reach the channel.
    final class Reads: ChannelOutboundHandler, @unchecked Sendable {
        // Safety: used on the embedded channel's loop only.
        typealias OutboundIn = Never
        var count = 0
        func read(context: ChannelHandlerContext) {
            count += 1
            context.read()
        }
    }

    struct Setup {
        let channel: EmbeddedChannel
        let handler: WebSocketFrameHandler
        let stalled: StalledWrites
        let reads: Reads
        let events: GQLLocked<[WebSocketEvent]>
    }

    static func setUp(maximumMessageSize: Int = 1024) throws -> Setup {
        let channel = EmbeddedChannel()
        let events = GQLLocked<[WebSocketEvent]>([])
        let closed = channel.eventLoop.makePromise(of: WebSocketClosure.self)
        let handler = WebSocketFrameHandler(
            maximumMessageSize: maximumMessageSize, closeTimeout: .seconds(2), target: "ws://test", closed: closed,
            onEvent: { event in events.withLock { $0.append(event) } })
        let stalled = StalledWrites()
        let reads = Reads()
        try channel.pipeline.syncOperations.addHandlers([reads, stalled, handler])
        try channel.connect(to: SocketAddress(ipAddress: "127.0.0.1", port: 1)).wait()
        return Setup(channel: channel, handler: handler, stalled: stalled, reads: reads, events: events)
    }

    static func ping(_ text: String) -> WebSocketFrame {
        WebSocketFrame(fin: true, opcode: .ping, data: ByteBuffer(string: text))
    }

    @Test func pingsWhileAPongIsStuckAreCoalescedAndReadingWaits() throws {
        let setup = try Self.setUp()
        defer { _ = try? setup.channel.finish() }
        try setup.channel.writeInbound(Self.ping("1"))
        #expect(setup.stalled.held.count == 1)
        for n in 2...1000 { try setup.channel.writeInbound(Self.ping("\(n)")) }
        // One pong in flight, none queued behind it but the latest ping's payload.
        #expect(setup.stalled.held.count == 1)
        #expect(setup.handler.statistics.pingsCoalesced == 998)
        // Reading waits for the pong.
        let before = setup.reads.count
        setup.channel.read()
        #expect(setup.reads.count == before)
        #expect(setup.handler.statistics.readsHeld == 1)
        // Written: the latest ping is answered, and reading resumes (nothing waits behind that pong).
        setup.stalled.release()
        #expect(setup.stalled.held.map { String(buffer: $0.0.data) } == ["1000"])
        #expect(setup.reads.count == before + 1)
        #expect(setup.handler.statistics.pongsSent == 2)
    }

    @Test func anUnwritableChannelOrThePausedOwnerStopsReading() throws {
        let setup = try Self.setUp()
        defer { _ = try? setup.channel.finish() }
        setup.channel.isWritable = false
        setup.channel.pipeline.fireChannelWritabilityChanged()
        setup.channel.read()
        #expect(setup.reads.count == 0)
        setup.channel.isWritable = true
        setup.channel.pipeline.fireChannelWritabilityChanged()
        #expect(setup.reads.count == 1)
        setup.handler.setReadingPaused(true)
        setup.channel.read()
        #expect(setup.reads.count == 1)
        setup.handler.setReadingPaused(false)
        #expect(setup.reads.count == 2)
    }

    @Test func aSendWaitsWhileTheChannelIsUnwritable() throws {
        let setup = try Self.setUp()
        defer { _ = try? setup.channel.finish() }
        setup.channel.isWritable = false
        let promise = setup.channel.eventLoop.makePromise(of: Void.self)
        let done = GQLLocked(false)
        promise.futureResult.whenSuccess { done.withLock { $0 = true } }
        setup.handler.send(text: "hello", promise: promise)
        #expect(!done.withLock { $0 })
        setup.channel.isWritable = true
        setup.channel.pipeline.fireChannelWritabilityChanged()
        #expect(done.withLock { $0 })
    }

    @Test(arguments: [WebSocketOpcode.binary, .text])
    func aMessageOverTheLimitEndsTheSocketWhateverItsKind(_ opcode: WebSocketOpcode) throws {
        let setup = try Self.setUp(maximumMessageSize: 100)
        defer { _ = try? setup.channel.finish() }
        try setup.channel.writeInbound(
            WebSocketFrame(fin: false, opcode: opcode, data: ByteBuffer(repeating: 0x61, count: 80)))
        try setup.channel.writeInbound(
            WebSocketFrame(fin: false, opcode: .continuation, data: ByteBuffer(repeating: 0x61, count: 80)))
        let tooLarge = setup.events.withLock { $0.contains { if case .tooLarge = $0 { true } else { false } } }
        #expect(tooLarge)
        let close = setup.stalled.held.first?.0
        #expect(close?.opcode == .connectionClose)
        let code = close.flatMap { frame -> UInt16? in
            var data = frame.data
            return data.readInteger(as: UInt16.self)
        }
        #expect(code == 1009)
    }
}
