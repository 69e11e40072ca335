import Glibc

/// The C side of `IPAddress`: a resolved `sockaddr` read as one, and the text forms through
/// inet_pton and inet_ntop.
extension SocketAddress {
    /// The address this socket address holds; nil for a family other than IPv4 and IPv6.
    var ipAddress: IPAddress? {
        var copy = storage
        switch Int32(storage.ss_family) {
        case AF_INET:
            return withUnsafePointer(to: &copy) {
                $0.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { .v4(UInt32(bigEndian: $0.pointee.sin_addr.s_addr)) }
            }
        case AF_INET6:
            return withUnsafePointer(to: &copy) {
                $0.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) { Self.address(of: $0.pointee.sin6_addr) }
            }
        default:
            return nil
        }
    }

    static func parse(_ text: String) -> IPAddress? {
        var v4 = in_addr()
        if inet_pton(AF_INET, text, &v4) == 1 { return .v4(UInt32(bigEndian: v4.s_addr)) }
        var v6 = in6_addr()
        if inet_pton(AF_INET6, text, &v6) == 1 { return address(of: v6) }
        return nil
    }

    static func format(_ address: IPAddress) -> String {
        var buffer = [CChar](repeating: 0, count: Int(INET6_ADDRSTRLEN))
        let written: UnsafePointer<CChar>?
        switch address {
        case let .v4(value):
            var raw = in_addr(s_addr: value.bigEndian)
            written = inet_ntop(AF_INET, &raw, &buffer, socklen_t(buffer.count))
        case let .v6(high, low):
            var raw = in6_addr()
            withUnsafeMutableBytes(of: &raw) { bytes in
                for index in 0..<8 {
                    bytes[index] = UInt8(truncatingIfNeeded: high >> (56 - 8 * index))
                    bytes[8 + index] = UInt8(truncatingIfNeeded: low >> (56 - 8 * index))
                }
            }
            written = inet_ntop(AF_INET6, &raw, &buffer, socklen_t(buffer.count))
        }
        guard written != nil else { return "?" }
        return String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    private static func address(of raw: in6_addr) -> IPAddress {
        var copy = raw
        return withUnsafeBytes(of: &copy) { bytes in
            var high: UInt64 = 0, low: UInt64 = 0
            for index in 0..<8 {
                high = high << 8 | UInt64(bytes[index])
                low = low << 8 | UInt64(bytes[8 + index])
            }
            return .v6(high: high, low: low)
        }
    }
}
