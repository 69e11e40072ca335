// parse(write(x)) == x for every string JSONWriter can be given, as a value and as a key; the
// comparison is on UTF-8 bytes, stricter than String's canonical equivalence.
import PushCore

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let s = String(decoding: UnsafeBufferPointer(start: data, count: size), as: UTF8.self)

    var writer = JSONWriter()
    writer.field("k", s)
    let written = writer.finish()
    roundTrip(written, key: "k", value: s)

    var keyed = JSONWriter()
    keyed.field(named: s, s)
    roundTrip(keyed.finish(), key: s, value: s)

    var list = JSONWriter()
    list.field("k", strings: [s, ""])
    let listed = list.finish()
    guard case let .object(object)? = try? JSONParser.parse(listed), object.count == 1,
          case let .array(elements)? = object["k"], elements.count == 2,
          case let .string(first) = elements[0], first.utf8.elementsEqual(s.utf8), elements[1] == .string("")
    else { preconditionFailure("field(_:strings:) does not round-trip: \(listed.count) bytes written") }
    return 0
}

private func roundTrip(_ written: [UInt8], key: String, value: String) {
    let parsed: JSONValue
    do {
        parsed = try JSONParser.parse(written)
    } catch {
        preconditionFailure("JSONWriter wrote invalid JSON (\(error)) for a \(value.utf8.count)-byte string")
    }
    guard case let .object(object) = parsed, object.count == 1,
          let (parsedKey, parsedValue) = object.first,
          parsedKey.utf8.elementsEqual(key.utf8),
          case let .string(text) = parsedValue, text.utf8.elementsEqual(value.utf8)
    else { preconditionFailure("parse(write(x)) != x for a \(value.utf8.count)-byte string") }
}
