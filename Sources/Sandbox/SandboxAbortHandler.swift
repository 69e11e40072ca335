#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import NIOCore

/// Sits in front of TLS so that closing through it skips TLS close_notify: with SO_LINGER 0 the
/// peer sees a TCP reset, like a crashed server or a middlebox dropping the connection.
final class SandboxAbortHandler: ChannelInboundHandler {
    typealias InboundIn = NIOAny

    private var context: ChannelHandlerContext?

    func handlerAdded(context: ChannelHandlerContext) {
        self.context = context
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        self.context = nil
    }

    func abort() {
        guard let context else { return }
        // In the event loop the option is set before `close` runs.
        _ = (context.channel as? any SocketOptionProvider)?.setSoLinger(linger(l_onoff: 1, l_linger: 0))
        context.close(promise: nil)
    }
}
