/// Which of a host's resolved addresses a client that must stay on the public internet may use
/// (`onlyGlobalAddresses`): the global unicast ones, with the others named for the error. One rule
/// for the HTTP/2 pool's connections and for any other client that connects to an address it
/// resolved and checked itself.
public struct AddressScreen: Sendable, Equatable {
    public private(set) var usable: [IPAddress] = []
    /// The refused addresses, each with its scope ("127.0.0.1 (a loopback address)").
    public private(set) var refused: [String] = []

    /// Where each usable address was in the list screened, so a caller holding richer socket
    /// addresses keeps those without classifying them again.
    public private(set) var usableIndices: [Int] = []

    public init(_ addresses: [IPAddress]) {
        self.init(addresses.map(Optional.some))
    }

    /// nil stands for a socket address that is not an IP address: never usable.
    public init(_ addresses: [IPAddress?]) {
        for (index, address) in addresses.enumerated() {
            guard let address else {
                refused.append("an address that is not IP")
                continue
            }
            let scope = IPAddressScope(of: address)
            if scope.isGlobal {
                usable.append(address)
                usableIndices.append(index)
            } else {
                refused.append("\(address) (\(scope))")
            }
        }
    }

    /// The error when nothing is usable: nothing was connected, so nothing was sent.
    public func refusal(host: String) -> HTTP2Error? {
        guard usable.isEmpty else { return nil }
        return HTTP2Error(code: .addressNotAllowed,
                          message: "\(host) resolves only to addresses that are not public: \(refused.joined(separator: ", "))")
    }
}

/// getaddrinfo for clients outside the pool, on a short-lived thread as the pool's own lookups
/// are, so that a slow DNS server never stalls the caller's thread.
public enum AddressLookup {
    /// The addresses `host` resolves to (an IP literal is returned as it is, without a lookup).
    public static func resolve(host: String, port: Int, completion: @escaping @Sendable (Result<[IPAddress], HTTP2Error>) -> Void) {
        if let literal = IPAddress(host) {
            completion(.success([literal]))
            return
        }
        Resolver.resolve(host: host, port: port) { result in
            completion(result.map { $0.compactMap(\.ipAddress) })
        }
    }
}
