import Testing
@testable import PushCore

/// Inputs that `ops/fuzz` (Fuzz/FuzzDeviceToken and the other PushCore targets) found, kept as
/// tests; each is also in Fuzz/Corpus/<target>/.
@Suite("PushCore: fuzz regressions")
struct PushCoreFuzzRegressionTests {
    /// The 32 bytes 0…31: canonical Base64 ends "Hh8=", whose '8' (111100) leaves the two bits
    /// after the last byte zero.
    static let canonical = "AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8="

    // crash-base64-32-nonzero-trailing-bits: "…Hh9=" decoded to the same 32 bytes, so a token
    // nobody's encoder writes was accepted as another spelling of a device.
    @Test("a 44-character Base64 token whose unused bits are not zero is refused", arguments: ["9", "+", "/", "B"])
    func nonCanonicalBase64Token(_ last: String) {
        let text = String(Self.canonical.dropLast(2)) + last + "="
        #expect(throws: TokenProblem.self) { try DeviceToken(validating: text) }
    }

    @Test("the canonical spelling of the same bytes is accepted")
    func canonicalBase64Token() throws {
        #expect(try DeviceToken(validating: Self.canonical).identity == Hex.encode((0..<32).map { UInt8($0) }))
    }

    @Test("Base64 with bits left over after the last byte that are not zero decodes to nil", arguments: [
        "Zh==", "Zh", "Zm9=", "Zm9", "Zm9vYh==", "Zm9vYmF=", "AB==", "AAB=",
    ])
    func nonZeroTrailingBits(_ text: String) {
        #expect(Base64.decode(text) == nil)
    }

    @Test("the same inputs with those bits zero decode", arguments: [
        ("Zg==", "f"), ("Zg", "f"), ("Zm8=", "fo"), ("Zm8", "fo"), ("Zm9vYg==", "foob"), ("Zm9vYmE=", "fooba"),
    ])
    func zeroTrailingBits(_ text: String, _ plain: String) {
        #expect(Base64.decode(text) == Array(plain.utf8))
    }
}
