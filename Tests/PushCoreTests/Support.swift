import Foundation
import Testing
import APNsCore
@testable import PushCore

/// Device tokens used throughout the tests (lowercase hex).
enum Tok {
    /// 64 hex characters: the usual 32-byte token.
    static let a = String(repeating: "ab", count: 32)
    static let b = String(repeating: "0123456789abcdef", count: 4)
    /// 120 hex characters: Apple does not fix the length.
    static let c = String(repeating: "c0ffee", count: 20)
    static let longest = String(repeating: "f0", count: 200)
}

/// The fixed clock and id generator the parser is given in these tests.
enum Fixed {
    static let now = 1_700_000_000
    static let generatedID = "generated-id"
}

func parseJob(_ body: String, messageID: String? = nil, now: Int = Fixed.now) throws(JobRejection) -> PushJob {
    try parseJob(Array(body.utf8), messageID: messageID, now: now)
}

func parseJob(_ body: [UInt8], messageID: String? = nil, now: Int = Fixed.now) throws(JobRejection) -> PushJob {
    try JobParser.apns.parse(body, messageID: messageID, now: now, makeID: { Fixed.generatedID })
}

/// A job body built from raw JSON fragments: a minimal valid job, with fields replaced or removed.
func jobBody(_ overrides: [String: String] = [:], removing removed: Set<String> = []) -> String {
    var fields = ["tokens": #"["\#(Tok.a)"]"#, "payload": #"{"aps":{"alert":"Hi"}}"#]
    fields.merge(overrides) { _, new in new }
    for key in removed { fields[key] = nil }
    let members = fields.keys.sorted().map { #""\#($0)":\#(fields[$0]!)"# }
    return "{" + members.joined(separator: ",") + "}"
}

/// `{"aps":{"alert":"xxx…"}}` serialised to exactly `size` bytes (JSONSerialization writes it compactly).
func alertPayload(bytes size: Int) -> String {
    let overhead = #"{"aps":{"alert":""}}"#.utf8.count
    return #"{"aps":{"alert":"\#(String(repeating: "x", count: size - overhead))"}}"#
}

/// `template` ending in an empty string member (`"x":""}`), padded there to `size` bytes.
func paddedPayload(_ template: String, bytes size: Int) -> String {
    String(template.dropLast(2)) + String(repeating: "x", count: size - template.utf8.count) + #""}"#
}

func jsonObject(_ bytes: [UInt8]) throws -> [String: Any] {
    let any = try JSONSerialization.jsonObject(with: Data(bytes), options: [])
    return try #require(any as? [String: Any], "not a JSON object: \(String(decoding: bytes, as: UTF8.self))")
}

func text(_ bytes: [UInt8]) -> String { String(decoding: bytes, as: UTF8.self) }

/// Lowercase hex, written out here rather than with the module's own encoder.
func hexString(_ bytes: [UInt8]) -> String {
    let digits = Array("0123456789abcdef")
    return String(bytes.flatMap { [digits[Int($0 >> 4)], digits[Int($0 & 0xf)]] })
}

/// The JSON re-serialised with sorted keys, to compare documents regardless of key order.
func canonicalJSON(_ bytes: [UInt8]) throws -> String {
    let object = try JSONSerialization.jsonObject(with: Data(bytes), options: [])
    return text(Array(try JSONSerialization.data(withJSONObject: object, options: [.sortedKeys, .withoutEscapingSlashes])))
}
