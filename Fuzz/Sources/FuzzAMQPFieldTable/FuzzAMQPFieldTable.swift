// An AMQP 0-9-1 field table (message headers, the arguments of a declaration) as a broker or a
// publisher could send it. rabbitmq-c decodes the bytes and the worker turns them into Swift
// (`FieldTableWire.decode`, through `AMQPConnection.decode(table:)`); what it decoded it must be
// able to send again (`FieldTableWire.encode`, through `FieldTableEncoder`, the connection's own
// encoder): either the encoder refuses it as `unencodable` because a key has grown past 255 bytes
// (invalid UTF-8 comes back as three-byte U+FFFD), or the encoding decodes to the same value.
@testable import AMQP

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    guard let (decoded, bytesRead) = FieldTableWire.decode(Array(UnsafeBufferPointer(start: data, count: size))) else { return 0 }
    precondition(bytesRead <= size, "amqp_decode_table read to \(bytesRead) of \(size) bytes")

    let encoded: [UInt8]
    do {
        encoded = try FieldTableWire.encode(decoded)
    } catch {
        precondition(error.code == .unencodable && longestKey(in: .table(decoded)) > FieldTableEncoder.maxKeyBytes,
                     "a decoded table with keys of at most \(longestKey(in: .table(decoded))) bytes cannot be encoded: \(error)")
        return 0
    }
    precondition(longestKey(in: .table(decoded)) <= FieldTableEncoder.maxKeyBytes,
                 "a key of \(longestKey(in: .table(decoded))) bytes was encoded")
    guard let (again, readBack) = FieldTableWire.decode(encoded) else {
        preconditionFailure("the re-encoded table (\(encoded.count) bytes) does not decode")
    }
    precondition(readBack == encoded.count, "the re-encoded table decodes \(readBack) of \(encoded.count) bytes")
    precondition(same(.table(again), .table(decoded)), "decode(encode(decode(x))) != decode(x)")
    precondition((try? FieldTableWire.encode(again)) == encoded, "encoding is not deterministic")
    return 0
}

/// The longest key in UTF-8 bytes anywhere in the value (nested tables, tables in arrays).
private func longestKey(in value: AMQPFieldValue) -> Int {
    switch value {
    case let .table(table): table.reduce(0) { max($0, $1.key.utf8.count, longestKey(in: $1.value)) }
    case let .array(array): array.reduce(0) { max($0, longestKey(in: $1)) }
    default: 0
    }
}

/// Equality with doubles compared bit for bit (NaN is a value a table can carry).
private func same(_ a: AMQPFieldValue, _ b: AMQPFieldValue) -> Bool {
    switch (a, b) {
    case let (.double(x), .double(y)): return x.bitPattern == y.bitPattern
    case let (.array(x), .array(y)): return x.count == y.count && zip(x, y).allSatisfy(same)
    case let (.table(x), .table(y)):
        return x.count == y.count && x.allSatisfy { key, value in y[key].map { same(value, $0) } ?? false }
    default: return a == b
    }
}
