/// A request's header list flattened into one byte buffer, built on the caller's thread so the
/// I/O thread only points nghttp2 at it. Pseudo-headers come first; names are lowercased.
struct RequestHeaderBlock: Sendable {
    struct Field: Sendable {
        var nameStart: Int32
        var nameLength: Int32
        var valueStart: Int32
        var valueLength: Int32
        var neverIndex: Bool
    }

    private(set) var bytes: [UInt8] = []
    private(set) var fields: [Field] = []

    /// Connection-specific headers are illegal in HTTP/2 (RFC 9113 8.2.2); `host` is replaced by `:authority`.
    private static let dropped: [[UInt8]] = ["connection", "keep-alive", "proxy-connection", "transfer-encoding", "upgrade", "host"]
        .map { Array($0.utf8) }

    init(request: HTTP2Request, authority: String) {
        bytes.reserveCapacity(128 + request.headers.reduce(0) { $0 + $1.name.utf8.count + $1.value.utf8.count })
        fields.reserveCapacity(4 + request.headers.count)
        append(name: ":method".utf8, value: request.method.utf8, neverIndex: false)
        append(name: ":scheme".utf8, value: "https".utf8, neverIndex: false)
        append(name: ":authority".utf8, value: authority.utf8, neverIndex: false)
        append(name: ":path".utf8, value: request.path.utf8, neverIndex: false)
        for header in request.headers {
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

    /// For tests and debug logs: the fields as (name, value) text.
    var textFields: [(name: String, value: String)] {
        fields.map { field in
            (String(decoding: bytes[Int(field.nameStart)..<Int(field.nameStart + field.nameLength)], as: UTF8.self),
             String(decoding: bytes[Int(field.valueStart)..<Int(field.valueStart + field.valueLength)], as: UTF8.self))
        }
    }
}
