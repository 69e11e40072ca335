import Crypto
import Foundation
import APNsCore
import PushCore

/// A provider token whose signature, key and issuer checked out.
struct VerifiedProviderToken: Sendable, Hashable {
    let keyID: String
    let issuedAt: Int
}

/// The outcome of checking a provider token: valid, or the reason APNs would give.
enum ProviderTokenCheck: Sendable, Hashable {
    case valid(VerifiedProviderToken)
    case rejected(APNsReason)
}

/// Verifies an APNs provider token (JWT, ES256) the way APNs does (Apple, "Establishing a token-based connection to APNs"). Runs only
/// when a connection presents a token it has not seen, so Foundation JSON is fine here.
enum ProviderTokenVerifier {
    static func verify(_ jwt: Substring, keyring: SandboxKeyring) -> ProviderTokenCheck {
        let parts = jwt.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 3,
              let headerData = base64URLDecode(parts[0]),
              let claimsData = base64URLDecode(parts[1]),
              let signatureData = base64URLDecode(parts[2]),
              let header = try? JSONSerialization.jsonObject(with: headerData) as? [String: Any],
              let claims = try? JSONSerialization.jsonObject(with: claimsData) as? [String: Any]
        else { return .rejected(.invalidProviderToken) }

        guard header["alg"] as? String == "ES256",
              let keyID = header["kid"] as? String,
              let key = keyring.keys[keyID],
              // JWS uses the raw 64-byte r||s; a DER signature is what APNs rejects most often.
              signatureData.count == 64,
              let signature = try? P256.Signing.ECDSASignature(rawRepresentation: signatureData)
        else { return .rejected(.invalidProviderToken) }

        let signingInput = jwt[..<parts[1].endIndex]
        guard let publicKey = try? P256.Signing.PublicKey(x963Representation: key.publicKey),
              publicKey.isValidSignature(signature, for: Data(signingInput.utf8))
        else {
            return .rejected(.invalidProviderToken)
        }
        guard claims["iss"] as? String == key.teamID,
              let iat = claims["iat"] as? NSNumber, let issuedAt = seconds(iat)
        else { return .rejected(.invalidProviderToken) }
        return .valid(VerifiedProviderToken(keyID: keyID, issuedAt: issuedAt))
    }

    /// A JWT NumericDate in whole seconds: an integer, or a number with its fraction cut off; nil
    /// for one no `Int` holds (`1e300`), where `intValue` would make up a time.
    static func seconds(_ number: NSNumber) -> Int? {
        Int(exactly: number) ?? Int(exactly: number.doubleValue.rounded(.down))
    }

    static func base64URLDecode(_ text: Substring) -> Data? {
        var base64 = text.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        if base64.contains("=") { return nil }
        base64 += String(repeating: "=", count: (4 - base64.count % 4) % 4)
        return Data(base64Encoded: base64)
    }
}
