// One complete request as the sandbox's HTTP/2 handler hands it to `SandboxRequestValidator`.
//
// Input layout:
//   byte 0: bits 0–1 the client identity (0 and 3: no certificate, so a provider token is needed;
//           1: a certificate for com.example.app; 2: a CA-signed certificate without a bundle ID),
//           bit 2: the sandbox restricts bundle IDs to com.example.app;
//   the rest split at every 0x00: name, value, name, value, …; an odd last piece is the body.
// An `authorization` value `sign:<claims>` becomes `bearer <JWT>` whose claims are <claims>, signed
// with the sandbox's key FUZZKEY01 (header {"alg":"ES256","kid":"FUZZKEY01"}), so the fuzzer reaches
// the claim checks behind the signature. Each request is validated twice on one connection's
// token cache (the second time takes the cached path).
import Crypto
import NIOCore
import NIOHPACK
import NIOHTTP2
import PushCore
@testable import Sandbox

private let keyID = "FUZZKEY01"
private let teamID = "FUZZTEAM01"
// swift-crypto does not mark the key Sendable on Linux; libFuzzer calls the target from one thread.
nonisolated(unsafe) private let signingKey = try! P256.Signing.PrivateKey(rawRepresentation: [UInt8](repeating: 0x5a, count: 32))
private let keyring = try! SandboxKeyring([
    SandboxTokenKey(keyID: keyID, teamID: teamID, publicKeyPEM: signingKey.publicKey.pemRepresentation),
])
private let epochSeconds = 1_700_000_000

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    guard size > 0 else { return 0 }
    let mode = data[0]
    let identity: SandboxClientIdentity = switch mode & 3 {
    case 1: .certificate(bundleID: "com.example.app")
    case 2: .unusableCertificate
    default: .none
    }
    let validator = SandboxRequestValidator(
        keyring: keyring,
        allowedBundleIDs: mode & 4 != 0 ? ["com.example.app"] : []
    )

    let pieces = UnsafeBufferPointer(start: data + 1, count: size - 1).split(separator: 0, omittingEmptySubsequences: false)
    var headers = HPACKHeaders()
    var index = 0
    while index + 1 < pieces.count {
        defer { index += 2 }
        // swift-nio-http2 refuses a header block with a name that is not an ASCII token before any
        // handler sees it (and HPACKHeaders.add traps on a non-ASCII name): such pairs are dropped.
        guard pieces[index].allSatisfy({ $0 > 0x20 && $0 < 0x7f }) else { continue }
        let name = String(decoding: pieces[index], as: UTF8.self)
        var value = String(decoding: pieces[index + 1], as: UTF8.self)
        if name == "authorization", value.hasPrefix("sign:") { value = "bearer " + signedJWT(claims: Array(pieces[index + 1].dropFirst(5))) }
        headers.add(name: name, value: value)
    }
    let body: [UInt8] = index < pieces.count ? Array(pieces[index]) : []
    let frame = HTTP2Frame.FramePayload.Headers(headers: headers, endStream: body.isEmpty)

    var tokens = ProviderTokenCache()
    var uuids = SandboxUUIDGenerator()
    let now = ContinuousClock.now
    for _ in 0..<2 {
        var draft = SandboxDraft()
        _ = validator.validate(
            headers: frame,
            body: body.isEmpty ? nil : ByteBuffer(bytes: body),
            bodyLength: body.count,
            identity: identity,
            tokens: &tokens,
            now: now,
            epochSeconds: epochSeconds,
            uuids: &uuids,
            draft: &draft
        )
        precondition(SandboxUUID.isCanonical(draft.apnsID), "the draft's apns-id is not a canonical UUID")
        if draft.status == 200 {
            precondition(draft.reason == nil, "200 with a reason")
            precondition(SandboxRequestValidator.isValidDeviceToken(Substring(draft.token)), "200 for a bad device token")
            precondition(!draft.topic.isEmpty, "200 without a topic")
            precondition(!draft.payload.isEmpty && draft.payload.count <= 5120, "200 for a \(draft.payload.count)-byte payload")
            precondition(SandboxRequestValidator.isJSONObject(draft.payload), "200 for a payload that is not a JSON object")
            precondition([1, 5, 10].contains(draft.priority), "200 with priority \(draft.priority)")
        } else {
            precondition(draft.reason != nil && (400...599).contains(draft.status), "status \(draft.status) without a reason")
        }
    }
    return 0
}

private func signedJWT(claims: [UInt8]) -> String {
    let header = Base64.encode(Array(#"{"alg":"ES256","kid":"\#(keyID)"}"#.utf8), urlSafe: true, padded: false)
    let body = Base64.encode(claims, urlSafe: true, padded: false)
    let signingInput = header + "." + body
    let signature = try! signingKey.signature(for: Array(signingInput.utf8))
    return signingInput + "." + Base64.encode(signature.rawRepresentation, urlSafe: true, padded: false)
}
