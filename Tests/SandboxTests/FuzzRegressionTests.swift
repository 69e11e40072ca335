import Crypto
import Foundation
@testable import Sandbox
import Testing

/// Inputs that `ops/fuzz` (Fuzz/FuzzSandboxRequest) found, kept as tests; each is also in
/// Fuzz/Corpus/FuzzSandboxRequest/.
@Suite("Sandbox: fuzz regressions")
struct SandboxFuzzRegressionTests {
    static let keyID = "FUZZKEY01"
    static let teamID = "FUZZTEAM01"
    /// Fuzz/FuzzSandboxRequest's key (computed: swift-crypto's keys are not Sendable on Linux).
    static var signingKey: P256.Signing.PrivateKey { try! P256.Signing.PrivateKey(rawRepresentation: [UInt8](repeating: 0x5a, count: 32)) }
    static let now = 1_700_000_000

    static func keyring() throws -> SandboxKeyring {
        try SandboxKeyring([SandboxTokenKey(keyID: keyID, teamID: teamID, publicKeyPEM: signingKey.publicKey.pemRepresentation)])
    }

    /// `bearer <JWT>` with these claims, correctly signed.
    static func authorization(claims: String) throws -> String {
        let header = #"{"alg":"ES256","kid":"\#(keyID)"}"#
        let input = base64URL(Data(header.utf8)) + "." + base64URL(Data(claims.utf8))
        let signature = try signingKey.signature(for: Data(input.utf8))
        return "bearer " + input + "." + base64URL(signature.rawRepresentation)
    }

    static func base64URL(_ data: Data) -> String {
        data.base64EncodedString().replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
    }

    static func check(iat: String) throws -> ProviderTokenCheck {
        var cache = ProviderTokenCache()
        return cache.authenticate(
            authorization: try authorization(claims: #"{"iss":"\#(teamID)","iat":\#(iat)}"#),
            keyring: try keyring(), now: .now, epochSeconds: now)
    }

    // crash-iat-int-min: `epochSeconds - issuedAt` overflowed and the sandbox trapped on a signed token.
    @Test("a signed token issued at Int.min is expired, not an arithmetic overflow")
    func issuedAtIntMin() throws {
        #expect(try Self.check(iat: "-9223372036854775808") == .rejected(.expiredProviderToken))
    }

    // crash-iat-1e300: Foundation turned 1e300 into an Int that overflowed the same way.
    @Test("an iat that is no time a token could be issued at is an invalid token", arguments: ["1e300", "-1e300", "1e19"])
    func issuedAtOutOfRange(_ iat: String) throws {
        #expect(try Self.check(iat: iat) == .rejected(.invalidProviderToken))
    }

    @Test("a fresh token is valid; one issued more than an hour ago is expired; a fractional iat counts its whole seconds")
    func issuedAtInRange() throws {
        #expect(try Self.check(iat: "\(Self.now - 60)") == .valid(VerifiedProviderToken(keyID: Self.keyID, issuedAt: Self.now - 60)))
        #expect(try Self.check(iat: "\(Self.now - 60).75") == .valid(VerifiedProviderToken(keyID: Self.keyID, issuedAt: Self.now - 60)))
        #expect(try Self.check(iat: "\(Self.now - 3601)") == .rejected(.expiredProviderToken))
    }
}
