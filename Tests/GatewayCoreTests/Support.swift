import APNsCore
import PushCore
import Testing
@testable import GatewayCore

/// The fixed clock, token and keys the tests use.
enum Fixture {
    static let now = 1_700_000_000
    static let token = String(repeating: "ab", count: 32)
    /// A sender public key: 0x04, then 64 bytes.
    static let senderKey: [UInt8] = [0x04] + (1...64).map { UInt8($0) }
    static let salt: [UInt8] = (0..<16).map { UInt8(0xA0 + $0) }
    static let jobID = "job-1"

    static func app(_ environment: RelayEnvironment) -> String { environment == .production ? "toot" : "toot-dev" }

    /// An aes128gcm body: the RFC 8188 header (salt, rs, idlen, keyid), then `recordBytes` bytes.
    static func aes128gcmBody(recordBytes: Int = 40, recordSize: UInt32 = 4096, keyID: [UInt8] = senderKey) -> [UInt8] {
        salt + withUnsafeBytes(of: recordSize.bigEndian, Array.init) + [UInt8(keyID.count)] + keyID
            + (0..<recordBytes).map { UInt8(truncatingIfNeeded: $0 &* 7) }
    }

    static func base64url(_ bytes: [UInt8], padded: Bool = false) -> String {
        Base64.encode(bytes, urlSafe: true, padded: padded)
    }

    static let aesgcmHeaders = [
        "Content-Encoding": "aesgcm",
        "Encryption": "salt=\(base64url(salt))",
        "Crypto-Key": "dh=\(base64url(senderKey))",
        "TTL": "60",
    ]
}

/// Runs the relay with `headers` (looked up case-insensitively, as the caller promises).
func relay(path: String = "/relay-to/production/\(Fixture.token)", headers: [String: String] = Fixture.aesgcmHeaders,
           body: [UInt8] = Array("encrypted".utf8)) throws(RelayRefusal) -> RelayJob {
    try WebPushRelay.job(path: path, header: { name in headers.first { $0.key.lowercased() == name.lowercased() }?.value },
                         body: body, app: Fixture.app, jobID: Fixture.jobID, now: Fixture.now)
}

/// The refusal the relay answers with.
func refusal(path: String = "/relay-to/production/\(Fixture.token)", headers: [String: String] = Fixture.aesgcmHeaders,
             body: [UInt8] = Array("encrypted".utf8), sourceLocation: SourceLocation = #_sourceLocation) throws -> RelayRefusal {
    try #require(throws: RelayRefusal.self, sourceLocation: sourceLocation) { try relay(path: path, headers: headers, body: body) }
}

/// The job as the worker reads it: with its own parser and APNs rules.
func workerJob(_ body: [UInt8]) throws -> PushJob {
    try JobParser(rules: APNsJobRules()).parse(body, messageID: nil, now: Fixture.now, makeID: { "generated" })
}

/// The payload's members as strings or other values.
func payloadObject(_ job: PushJob) throws -> [String: JSONValue] {
    guard case let .object(members) = try JSONValue.parse(job.payload) else {
        Issue.record("the payload is not an object")
        return [:]
    }
    return members
}

func string(_ value: JSONValue?) -> String? {
    guard case let .string(text) = value else { return nil }
    return text
}

func text(_ bytes: [UInt8]) -> String { String(decoding: bytes, as: UTF8.self) }
