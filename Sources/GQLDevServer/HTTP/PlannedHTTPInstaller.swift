import HummingbirdCore
import NIOCore
import NIOHTTPTypes

/// Puts a ``PlannedHTTPHandler`` after Hummingbird's connection state handler when the first request arrives
/// (Hummingbird adds its HTTP handlers to a connection only once it knows the connection is not a WebSocket
/// upgrade, after the handlers it is given), then leaves the pipeline.
final class PlannedHTTPInstaller: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPRequestPart
    typealias InboundOut = HTTPRequestPart

    private let transport: HTTPTransport

    init(transport: HTTPTransport) {
        self.transport = transport
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let pipeline = context.pipeline.syncOperations
        if let state = try? pipeline.handler(type: HTTPConnectionStateHandler.self) {
            let connection = try? pipeline.handler(type: ConnectionGuard.self)
            try? pipeline.addHandler(
                PlannedHTTPHandler(transport: transport, connection: connection), position: .after(state))
        }
        context.fireChannelRead(data)
        pipeline.removeHandler(context: context, promise: nil)
    }
}
