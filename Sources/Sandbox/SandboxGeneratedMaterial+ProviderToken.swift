import Crypto
import Foundation

extension SandboxGeneratedMaterial {
    /// A provider token (JWT, ES256) signed with the generated `token-key.p8`, for demos and
    /// for printing a ready-to-run curl command. Reuse it: a new token per request on one
    /// connection earns 429 TooManyProviderTokenUpdates, as from APNs.
    public func makeProviderToken(issuedAt: Date = Date()) throws -> String {
        let pem = try String(contentsOfFile: self.tokenKeyFile, encoding: .utf8)
        let key = try P256.Signing.PrivateKey(pemRepresentation: pem)
        let header = #"{"alg":"ES256","kid":"\#(self.tokenKeyID)"}"#
        let claims = #"{"iss":"\#(self.teamID)","iat":\#(Int(issuedAt.timeIntervalSince1970))}"#
        let signingInput = Self.base64URL(Data(header.utf8)) + "." + Self.base64URL(Data(claims.utf8))
        let signature = try key.signature(for: Data(signingInput.utf8))
        return signingInput + "." + Self.base64URL(signature.rawRepresentation)
    }

    private static func base64URL(_ data: Data) -> String {
        data.base64EncodedString()
            .replacingOccurrences(of: "+", with: "-")
            .replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
    }
}
