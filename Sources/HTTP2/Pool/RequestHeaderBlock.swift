/// The header fields many requests share (everything but `:path`), flattened into one byte buffer
/// once, so sending the same notification to many devices copies no header per request: each
/// request only adds its path. Pseudo-headers come first; names are lowercased.
public struct RequestHeaderBlock: Sendable {
    struct Field: Sendable {
        var nameStart: Int32
        var nameLength: Int32
        var valueStart: Int32
        var valueLength: Int32
        var neverIndex: Bool
    }

    private(set) var bytes: [UInt8] = []
    private(set) var fields: [Field] = []
    /// `:path` goes after `:method`, `:scheme` and `:authority`.
    static let pathPosition = 3

    /// Connection-specific headers are illegal in HTTP/2 (RFC 9113 8.2.2); `host` is replaced by `:authority`.
    private static let dropped: [[UInt8]] = ["connection", "keep-alive", "proxy-connection", "transfer-encoding", "upgrade", "host"]
        .map { Array($0.utf8) }

    init(method: String, authority: String, headers: [HTTP2Header]) {
        bytes.reserveCapacity(64 + headers.reduce(0) { $0 + $1.name.utf8.count + $1.value.utf8.count })
        fields.reserveCapacity(3 + headers.count)
        append(name: ":method".utf8, value: method.utf8, neverIndex: false)
        append(name: ":scheme".utf8, value: "https".utf8, neverIndex: false)
        append(name: ":authority".utf8, value: authority.utf8, neverIndex: false)
        for header in headers {
            let start = bytes.count
            for byte in header.name.utf8 {
                bytes.append(byte >= UInt8(ascii: "A") && byte <= UInt8(ascii: "Z") ? byte | 0x20 : byte)
            }
            let name = bytes[start...]
            if name.first == UInt8(ascii: ":") || Self.dropped.contains(where: { $0.elementsEqual(name) }) {
                bytes.removeSubrange(start...)
                continue
            }
            let valueStart = bytes.count
            bytes.append(contentsOf: header.value.utf8)
            fields.append(Field(nameStart: Int32(start), nameLength: Int32(valueStart - start),
                                valueStart: Int32(valueStart), valueLength: Int32(bytes.count - valueStart),
                                neverIndex: header.neverIndex))
        }
    }

    private mutating func append(name: String.UTF8View, value: String.UTF8View, neverIndex: Bool) {
        let start = bytes.count
        bytes.append(contentsOf: name)
        let valueStart = bytes.count
        bytes.append(contentsOf: value)
        fields.append(Field(nameStart: Int32(start), nameLength: Int32(valueStart - start),
                            valueStart: Int32(valueStart), valueLength: Int32(bytes.count - valueStart),
                            neverIndex: neverIndex))
    }

    /// For tests and debug logs: the fields of a request to `path` as (name, value) text, in wire order.
    func textFields(path: String) -> [(name: String, value: String)] {
        var text = fields.map { field in
            (name: String(decoding: bytes[Int(field.nameStart)..<Int(field.nameStart + field.nameLength)], as: UTF8.self),
             value: String(decoding: bytes[Int(field.valueStart)..<Int(field.valueStart + field.valueLength)], as: UTF8.self))
        }
        text.insert((name: ":path", value: path), at: Self.pathPosition)
        return text
    }
}
