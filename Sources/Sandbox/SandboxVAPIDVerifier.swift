import Crypto
import Foundation
import PushCore

/// Checks a Web Push request's `Authorization: vapid t=<JWT>, k=<public key>` (RFC 8292) as the
/// strictest push services do: an ES256 signature by `k`, `aud` the service's origin, `exp` in the
/// future and at most 24 hours ahead, and a `sub` that is a mailto: or https: contact without
/// spaces, angle brackets or localhost (Apple answers 403 BadJwtToken to the others).
enum SandboxVAPIDVerifier {
    struct Verified: Sendable {
        let publicKey: [UInt8]
        let subject: String
        let expiresAt: Int
    }

    struct Refusal: Error, Sendable {
        /// 401 without usable credentials, 403 with refused ones.
        let status: Int
        let reason: String
    }

    static func verify(authorization: String?, origin: String, now: Int) throws(Refusal) -> Verified {
        guard let authorization, authorization.lowercased().hasPrefix("vapid ") else {
            throw Refusal(status: 401, reason: "MissingAuthorization: expected Authorization: vapid t=…, k=…")
        }
        var token: String?
        var key: String?
        for part in authorization.dropFirst("vapid ".count).split(separator: ",") {
            let trimmed = part.trimmingCharacters(in: .whitespaces)
            if trimmed.hasPrefix("t=") { token = String(trimmed.dropFirst(2)) }
            if trimmed.hasPrefix("k=") { key = String(trimmed.dropFirst(2)) }
        }
        guard let token, let key, let publicKeyBytes = Base64.decode(key), publicKeyBytes.count == 65,
              let publicKey = try? P256.Signing.PublicKey(x963Representation: publicKeyBytes) else {
            throw Refusal(status: 401, reason: "BadAuthorization: t= and k= (a 65-byte P-256 public key) are required")
        }
        let parts = token.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 3, let header = Base64.decode(String(parts[0])), let claimsBytes = Base64.decode(String(parts[1])),
              let signature = Base64.decode(String(parts[2])) else {
            throw Refusal(status: 403, reason: "BadJwtToken: not a JWS compact serialization")
        }
        guard case let .object(headerMembers)? = try? JSONValue.parse(header), headerMembers["alg"] == .string("ES256") else {
            throw Refusal(status: 403, reason: "BadJwtToken: the header's alg must be ES256")
        }
        guard let ecdsa = try? P256.Signing.ECDSASignature(rawRepresentation: signature),
              publicKey.isValidSignature(ecdsa, for: Data((parts[0] + "." + parts[1]).utf8)) else {
            throw Refusal(status: 403, reason: "BadJwtToken: the signature does not verify with k")
        }
        guard case let .object(claims)? = try? JSONValue.parse(claimsBytes) else {
            throw Refusal(status: 403, reason: "BadJwtToken: the claims are not a JSON object")
        }
        guard claims["aud"] == .string(origin) else {
            throw Refusal(status: 403, reason: "BadJwtToken: aud must be \(origin), got \(claims["aud"].map(JobParser.rendered) ?? "nothing")")
        }
        guard let expiresAt = claims["exp"]?.exactInteger, expiresAt > now else {
            throw Refusal(status: 403, reason: "BadJwtToken: exp is missing or past")
        }
        guard expiresAt <= now + 86_400 else {
            throw Refusal(status: 403, reason: "BadJwtToken: exp is more than 24 hours ahead")
        }
        guard case let .string(subject)? = claims["sub"],
              subject.hasPrefix("mailto:") || subject.hasPrefix("https://"),
              !subject.contains(" "), !subject.contains("<"), !subject.contains(">"), !subject.lowercased().contains("localhost") else {
            throw Refusal(status: 403, reason: "BadJwtToken: sub must be a mailto: or https: contact without spaces, angle brackets or localhost")
        }
        return Verified(publicKey: publicKeyBytes, subject: subject, expiresAt: expiresAt)
    }
}
