import Hummingbird
import NIOCore

/// Hummingbird's basic context and the address the connection comes from, which the relay's
/// per-address limit goes by.
struct GatewayRequestContext: RequestContext, RemoteAddressRequestContext {
    var coreContext: CoreRequestContextStorage
    let remoteAddress: SocketAddress?

    init(source: ApplicationRequestContextSource) {
        coreContext = .init(source: source)
        remoteAddress = source.channel.remoteAddress
    }
}
