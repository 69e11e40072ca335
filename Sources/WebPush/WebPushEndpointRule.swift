import HTTP2

/// Which push-service endpoints an app sends to, checked before a message is sent. Browsers
/// write subscriptions, so anyone does: an endpoint could name the worker's own network
/// (`https://127.0.0.1:6379/x`, a cloud's metadata address) and have the worker connect there.
/// Checked here: the port (`allowedEndpointPorts`, 443 by default) and an address written as the
/// host (`IPAddressScope`), or, through a proxy, a `localhost` name. A host name is checked where
/// it is resolved: by the HTTP/2 pool (`onlyGlobalAddresses`), which connects only to the
/// addresses it checked; through a proxy the proxy resolves it (docs/guides/web-push.md).
public struct WebPushEndpointRule: Sendable, Hashable {
    public var allowPrivateAddresses: Bool
    /// nil: any port.
    public var allowedPorts: Set<Int>?
    /// Names are resolved by a proxy, not here.
    public var proxied: Bool

    public init(allowPrivateAddresses: Bool = false, allowedPorts: Set<Int>? = [443], proxied: Bool = false) {
        self.allowPrivateAddresses = allowPrivateAddresses
        self.allowedPorts = allowedPorts
        self.proxied = proxied
    }

    init(_ configuration: WebPushConfiguration) {
        self.init(allowPrivateAddresses: configuration.allowPrivateEndpoints, allowedPorts: configuration.allowedEndpointPorts,
                  proxied: configuration.proxy != nil)
    }

    /// Why no message may go to `origin`, naming its host and what it is; nil when one may.
    public func refusal(of origin: WebPushEndpointOrigin) -> String? {
        if !allowPrivateAddresses {
            if let address = IPAddress(origin.host) {
                let scope = IPAddressScope(of: address)
                if !scope.isGlobal { return "the endpoint's host \(origin.host) is \(scope) (allow_private_endpoints is off)" }
            } else if proxied, Self.isLocalhost(origin.host) {
                return "the endpoint's host \(origin.host) names this machine (allow_private_endpoints is off)"
            }
        }
        if let allowedPorts, !allowedPorts.contains(origin.port) {
            let allowed = allowedPorts.sorted().map(String.init).joined(separator: ", ")
            return "the endpoint's port \(origin.port) on \(origin.host) is not allowed (allowed_endpoint_ports: \(allowed))"
        }
        return nil
    }

    /// `localhost` and its subdomains (RFC 6761 §6.3), with or without the final dot.
    static func isLocalhost(_ host: String) -> Bool {
        let name = host.hasSuffix(".") ? host.dropLast() : Substring(host)
        return name == "localhost" || name.hasSuffix(".localhost")
    }
}
