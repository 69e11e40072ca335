/// The topics of an APNs certificate's extension 1.2.840.113635.100.6.3.6 (Apple's certificate topics extension): DER,
/// a SEQUENCE whose UTF8String elements are the topics, each followed by a SEQUENCE naming its
/// kind ("app", "voip", "complication"). Read by hand: the whole format is those two tags.
enum CertificateTopics {
    static let extensionOID = "1.2.840.113635.100.6.3.6"

    /// The topics in order, or nil when `der` is not that shape.
    static func parse(_ der: [UInt8]) -> [String]? {
        var reader = DERReader(der)
        guard let (tag, outer) = reader.next(), tag == 0x30, reader.isAtEnd else { return nil }
        var inner = DERReader(outer)
        var topics: [String] = []
        while !inner.isAtEnd {
            guard let (tag, value) = inner.next() else { return nil }
            if tag == 0x0c { topics.append(String(decoding: value, as: UTF8.self)) }
        }
        return topics
    }
}

/// Tag-length-value elements of DER, definite lengths only (DER allows no other).
struct DERReader {
    private let bytes: [UInt8]
    private var offset = 0

    init(_ bytes: [UInt8]) { self.bytes = bytes }

    var isAtEnd: Bool { offset >= bytes.count }

    mutating func next() -> (tag: UInt8, value: [UInt8])? {
        guard offset + 2 <= bytes.count else { return nil }
        let tag = bytes[offset]
        var length = Int(bytes[offset + 1])
        offset += 2
        if length & 0x80 != 0 {
            let count = length & 0x7f
            guard count >= 1, count <= 4, offset + count <= bytes.count else { return nil }
            length = 0
            for byte in bytes[offset..<offset + count] { length = length << 8 | Int(byte) }
            offset += count
        }
        guard length <= bytes.count - offset else { return nil }
        defer { offset += length }
        return (tag, Array(bytes[offset..<offset + length]))
    }
}
