import Foundation
import Testing

/// `pushworker webpush keys`: a new pair each time, whose public key is the one Python's
/// `cryptography` (code that is not ours) derives from the private scalar.
@Suite struct WebPushKeysCommandTests {
    static let derivePublicKey = """
        import base64, sys
        from cryptography.hazmat.primitives.asymmetric import ec
        from cryptography.hazmat.primitives import serialization
        text = sys.argv[1]
        scalar = base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))
        assert len(scalar) == 32, len(scalar)
        key = ec.derive_private_key(int.from_bytes(scalar, "big"), ec.SECP256R1())
        point = key.public_key().public_bytes(serialization.Encoding.X962, serialization.PublicFormat.UncompressedPoint)
        print(base64.urlsafe_b64encode(point).rstrip(b"=").decode())
        """

    static func pair() throws -> (publicKey: String, privateKey: String) {
        let outcome = try CommandLineTests.run(["webpush", "keys", "--shell"])
        #expect(outcome.status == 0, "\(outcome.output)")
        var values: [String: String] = [:]
        for line in outcome.output.split(separator: "\n") {
            let parts = line.split(separator: "=", maxSplits: 1).map(String.init)
            if parts.count == 2 { values[parts[0]] = parts[1] }
        }
        return (try #require(values["VAPID_PUBLIC_KEY"]), try #require(values["VAPID_PRIVATE_KEY"]))
    }

    @Test func aNewPairWhosePublicKeyPythonDerivesFromThePrivateOne() throws {
        let first = try Self.pair(), second = try Self.pair()
        #expect(first.privateKey != second.privateKey)
        // 65 bytes and 32 bytes in unpadded base64url.
        #expect(first.publicKey.count == 87 && first.privateKey.count == 43)
        #expect(first.publicKey.hasPrefix("B"), "an uncompressed point starts with 0x04")

        let python = Process()
        python.executableURL = URL(fileURLWithPath: "/usr/bin/python3")
        python.arguments = ["-c", Self.derivePublicKey, first.privateKey]
        let output = Pipe()
        python.standardOutput = output
        python.standardError = output
        try python.run()
        let derived = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        python.waitUntilExit()
        #expect(python.terminationStatus == 0, "\(derived)")
        #expect(derived.trimmingCharacters(in: .whitespacesAndNewlines) == first.publicKey)
    }
}
