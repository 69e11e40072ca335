// Any bytes through the strict JSON parser, both entry points (`parse` for a document,
// `parseTopLevel` with a recorded member as JobParser uses it). They must agree, and a recorded
// member's bytes, compacted the way the payload is forwarded, must parse to the same value; and
// `shape(ofMember:in:)` (what the APNs rules read of a payload) must agree with the full parse.
@testable import PushCore

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    let document = try? JSONParser.parse(bytes)
    let value = try? JSONValue.parse(bytes)
    precondition(document == value, "JSONParser.parse and JSONValue.parse disagree")

    var parser = JSONParser(bytes, recordingRangeOf: "payload")
    let topLevel: JSONParser.TopLevel
    do {
        topLevel = try parser.parseTopLevel()
    } catch {
        precondition(document == nil, "parseTopLevel rejects what parse accepts: \(error)")
        if bytes.first(where: { ![0x20, 0x09, 0x0A, 0x0D].contains($0) }) == UInt8(ascii: "{") {
            precondition((try? JSONParser.shape(ofMember: "payload", in: bytes)) == nil, "shape accepts what parse rejects")
        }
        precondition(error.offset >= 0 && error.offset <= bytes.count, "error offset \(error.offset) outside the input")
        return 0
    }
    guard let document else { preconditionFailure("parseTopLevel accepts what parse rejects") }
    checkShape(of: "payload", in: bytes, document: document)
    switch topLevel {
    case let .value(value):
        precondition(value == document, "parseTopLevel's value differs from parse's")
        if case .object = value { preconditionFailure("parseTopLevel returned an object as .value") }
    case let .members(members):
        guard case let .object(object) = document else { preconditionFailure("members for a non-object") }
        var last = [String: JSONValue]()
        for (key, member) in members { last[key] = member }
        precondition(last == object, "members and object differ")
        if let range = parser.recordedRange {
            precondition(range.lowerBound >= 0 && range.upperBound <= bytes.count, "recorded range outside the input")
            let compacted = RawJSON.compact(bytes[range])
            guard let reparsed = try? JSONParser.parse(compacted) else {
                preconditionFailure("the compacted payload does not parse")
            }
            precondition(reparsed == last["payload"], "the compacted payload parses to a different value")
        } else {
            precondition(last["payload"] == nil, "a payload member was not recorded")
        }
    }
    return 0
}

/// The member's type, and for an object its names (repeated ones included), as the full parse has them.
func checkShape(of name: String, in bytes: [UInt8], document: JSONValue) {
    let shape: JSONShape?
    do { shape = try JSONParser.shape(ofMember: name, in: bytes) } catch {
        preconditionFailure("shape rejects what parse accepts: \(error)")
    }
    guard case let .object(object) = document, let member = object[name] else {
        precondition(shape == nil, "a shape for an absent member")
        return
    }
    guard let shape else { preconditionFailure("no shape for a present member") }
    precondition(shape.typeName == member.typeName, "shape \(shape.typeName), value \(member.typeName)")
    if case let .object(names) = shape, case let .object(members) = member {
        precondition(Set(names) == Set(members.keys), "shape's member names differ from the object's")
    }
}
