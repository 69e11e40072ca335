import APNsCore
import COpenSSL
import Foundation
import Logging
import PushCore
import PushTransport
import Testing
import NIOConcurrencyHelpers
@testable import APNs

/// The JWT is checked the way APNs would: header and claims decoded, and the raw r‖s signature
/// verified with OpenSSL against the key's public half.
@Suite struct APNsTokenProviderTests {
    static func makeKey(_ algorithm: String = "EC", _ options: [String] = ["-pkeyopt", "ec_paramgen_curve:P-256"]) throws -> (pem: [UInt8], path: String) {
        let path = NSTemporaryDirectory() + "apns-test-\(UUID().uuidString).p8"
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/openssl")
        process.arguments = ["genpkey", "-algorithm", algorithm] + options + ["-out", path]
        process.standardError = FileHandle.nullDevice
        try process.run()
        process.waitUntilExit()
        #expect(process.terminationStatus == 0)
        return (Array(try Data(contentsOf: URL(fileURLWithPath: path))), path)
    }

    static func decodeJSON(_ part: Substring) throws -> [String: Any] {
        let bytes = try #require(Base64.decode(String(part)))
        return try #require(try JSONSerialization.jsonObject(with: Data(bytes)) as? [String: Any])
    }

    @Test func tokenHasAPNsHeaderClaimsAndVerifiableRawSignature() throws {
        let key = try Self.makeKey()
        let provider = try APNsTokenProvider(keyPEM: key.pem, keyID: "ABC123DEFG", teamID: "DEF123GHIJ")
        let header = try provider.authorizationHeader()
        #expect(header.hasPrefix("bearer "))
        let parts = header.dropFirst("bearer ".count).split(separator: ".", omittingEmptySubsequences: false)
        #expect(parts.count == 3)
        #expect(!header.contains("="))   // base64url without padding
        let jose = try Self.decodeJSON(parts[0])
        #expect(jose["alg"] as? String == "ES256")
        #expect(jose["kid"] as? String == "ABC123DEFG")
        #expect(jose.count == 2)
        let claims = try Self.decodeJSON(parts[1])
        #expect(claims["iss"] as? String == "DEF123GHIJ")
        let iat = try #require(claims["iat"] as? Int)
        #expect(abs(iat - Int(Date().timeIntervalSince1970)) <= 5)
        let signature = try #require(Base64.decode(String(parts[2])))
        #expect(signature.count == 64)
        #expect(try Self.verify(signature: signature, message: Array("\(parts[0]).\(parts[1])".utf8), privateKeyPEM: key.pem))
        // A flipped bit must not verify: the check above can fail.
        var tampered = signature
        tampered[10] ^= 0x01
        #expect(try !Self.verify(signature: tampered, message: Array("\(parts[0]).\(parts[1])".utf8), privateKeyPEM: key.pem))
    }

    @Test func tokenIsCachedAndNotRefreshedWithinTwentyMinutes() throws {
        let key = try Self.makeKey()
        let provider = try APNsTokenProvider(keyPEM: key.pem, keyID: "ABC123DEFG", teamID: "DEF123GHIJ")
        let first = try provider.authorizationHeader()
        #expect(try provider.authorizationHeader() == first)
        #expect(try provider.refreshAfterRejection() == false)
        #expect(try provider.authorizationHeader() == first)
    }

    @Test(arguments: [("SHORT", "DEF123GHIJ", "apns-key-id"), ("ABC123DEFG", "toolongteamid", "apns-team-id")])
    func badIdentifiersAreNamed(keyID: String, teamID: String, option: String) throws {
        let key = try Self.makeKey()
        #expect { try APNsTokenProvider(keyPEM: key.pem, keyID: keyID, teamID: teamID) } throws: { error in
            "\(error)".contains(option)
        }
    }

    @Test func nonP256KeysAreRefused() throws {
        let rsa = try Self.makeKey("RSA", ["-pkeyopt", "rsa_keygen_bits:2048"])
        #expect { try APNsTokenProvider(keyPEM: rsa.pem, keyID: "ABC123DEFG", teamID: "DEF123GHIJ") } throws: { error in
            "\(error)".contains("P-256")
        }
        #expect { try APNsTokenProvider(keyPEM: Array("not a key".utf8), keyID: "ABC123DEFG", teamID: "DEF123GHIJ") } throws: { error in
            "\(error)".contains(".p8")
        }
    }

    /// An encrypted key is refused with the reason, never prompted for on the terminal.
    @Test func anEncryptedKeyIsRefusedWithoutAPrompt() throws {
        let encrypted = try Self.makeKey("EC", ["-pkeyopt", "ec_paramgen_curve:P-256", "-aes256", "-pass", "pass:secret"])
        #expect(String(decoding: encrypted.pem, as: UTF8.self).contains("ENCRYPTED PRIVATE KEY"))
        #expect { try APNsTokenProvider(keyPEM: encrypted.pem, keyID: "ABC123DEFG", teamID: "DEF123GHIJ") } throws: { error in
            "\(error)".contains("the APNs key is encrypted")
        }
    }

    /// raw r‖s → DER → EVP_DigestVerify, independently of the signer's code path.
    static func verify(signature: [UInt8], message: [UInt8], privateKeyPEM: [UInt8]) throws -> Bool {
        let key: OpaquePointer = try #require(privateKeyPEM.withUnsafeBytes { raw -> OpaquePointer? in
            let bio = BIO_new_mem_buf(raw.baseAddress, Int32(raw.count))
            defer { BIO_free(bio) }
            return PEM_read_bio_PrivateKey(bio, nil, nil, nil)
        })
        defer { EVP_PKEY_free(key) }
        let sig = try #require(ECDSA_SIG_new())
        defer { ECDSA_SIG_free(sig) }
        let r = signature.withUnsafeBufferPointer { BN_bin2bn($0.baseAddress, 32, nil) }
        let s = signature.withUnsafeBufferPointer { BN_bin2bn($0.baseAddress! + 32, 32, nil) }
        #expect(ECDSA_SIG_set0(sig, r, s) == 1)
        var derPointer: UnsafeMutablePointer<UInt8>?
        let derLength = i2d_ECDSA_SIG(sig, &derPointer)
        defer { CRYPTO_free(derPointer, #file, #line) }
        let context = try #require(EVP_MD_CTX_new())
        defer { EVP_MD_CTX_free(context) }
        #expect(EVP_DigestVerifyInit(context, nil, EVP_sha256(), nil, key) == 1)
        let result = message.withUnsafeBufferPointer { buffer in
            EVP_DigestVerify(context, derPointer, Int(derLength), buffer.baseAddress, buffer.count)
        }
        return result == 1
    }
}

@Suite("APNsTokenProvider key file")
struct APNsTokenProviderKeyFileTests {
    @Test func aMalformedKeyFileIsRefusedNamingTheFile() throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("pushworker-bad-\(UUID().uuidString).p8").path
        try "-----BEGIN PRIVATE KEY-----\nnot a key\n-----END PRIVATE KEY-----\n".write(toFile: path, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(atPath: path) }
        let error = #expect(throws: APNsConfigurationError.self) {
            try APNsTokenProvider(keyFile: path, keyID: "ABC123DEFG", teamID: "DEF123GHIJ")
        }
        #expect(error?.message.hasPrefix("apns-key-file \(path): ") == true, "\(error?.message ?? "")")
        #expect(error?.message.contains("not a PEM private key") == true)
    }
}

/// The refresh rules against an injected clock: no sleeping, and every boundary checked.
@Suite struct APNsTokenRefreshTests {
    /// A clock the test moves by hand.
    final class ManualClock: Sendable {
        private let offset = NIOLockedValueBox<Duration>(.zero)
        private let start = ContinuousClock.now
        func advance(by duration: Duration) { offset.withLockedValue { $0 += duration } }
        var clock: APNsTokenProvider.Clock {
            APNsTokenProvider.Clock(monotonic: { self.start + self.offset.withLockedValue { $0 } },
                                    unixSeconds: { 1_800_000_000 + Int(self.offset.withLockedValue { $0 }.components.seconds) })
        }
    }

    @Test func theTokenIsReplacedAfterRefreshAfterAndNotBefore() throws {
        let key = try APNsTokenProviderTests.makeKey()
        let time = ManualClock()
        let provider = try APNsTokenProvider(keyPEM: key.pem, keyID: "ABC123DEFG", teamID: "DEF123GHIJ", refreshAfter: .seconds(40 * 60), clock: time.clock)
        let first = try provider.authorizationHeader()
        time.advance(by: .seconds(40 * 60 - 1))
        #expect(try provider.authorizationHeader() == first)
        time.advance(by: .seconds(1))
        let second = try provider.authorizationHeader()
        #expect(second != first)
        let claims = try APNsTokenProviderTests.decodeJSON(second.dropFirst("bearer ".count).split(separator: ".")[1])
        #expect(claims["iat"] as? Int == 1_800_000_000 + 40 * 60)
    }

    @Test func aRejectedTokenIsReplacedOnlyOnceItIsTwentyMinutesOld() throws {
        let key = try APNsTokenProviderTests.makeKey()
        let time = ManualClock()
        let provider = try APNsTokenProvider(keyPEM: key.pem, keyID: "ABC123DEFG", teamID: "DEF123GHIJ", clock: time.clock)
        let first = try provider.authorizationHeader()
        time.advance(by: .seconds(20 * 60 - 1))
        #expect(try provider.refreshAfterRejection() == false)
        #expect(try provider.authorizationHeader() == first)
        time.advance(by: .seconds(1))
        #expect(try provider.refreshAfterRejection() == true)
        let second = try provider.authorizationHeader()
        #expect(second != first)
        // The new token starts its own 20 minutes: a second rejection right after changes nothing.
        #expect(try provider.refreshAfterRejection() == false)
        #expect(try provider.authorizationHeader() == second)
    }

    /// Refreshed from outside (the fleet's token in Redis): the token installed stays past
    /// `refreshAfter`, a rejection replaces it only once it is `minimumAge` old, and it is replaced
    /// by the provider itself only when older than 55 minutes (nobody installs tokens any more).
    @Test func anExternallyRefreshedTokenIsKeptUntilTheNextIsInstalled() throws {
        let key = try APNsTokenProviderTests.makeKey()
        let time = ManualClock()
        let provider = try APNsTokenProvider(keyPEM: key.pem, keyID: "ABC123DEFG", teamID: "DEF123GHIJ", clock: time.clock)
        provider.refreshExternally(minimumAge: .seconds(10))
        let minted = try provider.mintToken()
        #expect(minted.issuedAt == 1_800_000_000)
        provider.install(jwt: minted.jwt, issuedAt: minted.issuedAt)
        #expect(try provider.authorizationHeader() == "bearer " + minted.jwt)
        time.advance(by: .seconds(9))
        #expect(try provider.refreshAfterRejection() == false)
        time.advance(by: .seconds(50 * 60))
        #expect(try provider.authorizationHeader() == "bearer " + minted.jwt)
        time.advance(by: .seconds(5 * 60))
        #expect(try provider.authorizationHeader() != "bearer " + minted.jwt)
    }

    /// Providers of one Key ID but different keys (a regenerated sandbox key) are told apart.
    @Test func providersWithTheSameKeyIDAndAnotherKeyAreToldApart() throws {
        let key = try APNsTokenProviderTests.makeKey(), other = try APNsTokenProviderTests.makeKey()
        let provider = try APNsTokenProvider(keyPEM: key.pem, keyID: "ABC123DEFG", teamID: "DEF123GHIJ")
        let same = try APNsTokenProvider(keyPEM: key.pem, keyID: "ABC123DEFG", teamID: "DEF123GHIJ")
        let regenerated = try APNsTokenProvider(keyPEM: other.pem, keyID: "ABC123DEFG", teamID: "DEF123GHIJ")
        #expect(provider.publicKey.count == 91)
        #expect(provider.hasSameKey(as: same))
        #expect(!provider.hasSameKey(as: regenerated))
    }

    /// Many connections asking at the moment a token is due get one token between them, and of
    /// many rejections at once only one mints (two tokens within milliseconds: TooManyProviderTokenUpdates).
    @Test func concurrentCallersShareOneNewToken() async throws {
        let key = try APNsTokenProviderTests.makeKey()
        let time = ManualClock()
        let provider = try APNsTokenProvider(keyPEM: key.pem, keyID: "ABC123DEFG", teamID: "DEF123GHIJ", clock: time.clock)
        let first = try provider.authorizationHeader()
        time.advance(by: .seconds(50 * 60))
        let headers = try await withThrowingTaskGroup(of: String.self) { group in
            for _ in 0..<64 { group.addTask { try provider.authorizationHeader() } }
            return try await group.reduce(into: Set<String>()) { $0.insert($1) }
        }
        #expect(headers.count == 1)
        #expect(headers.first != first)

        time.advance(by: .seconds(20 * 60))
        let refreshed = try await withThrowingTaskGroup(of: Bool.self) { group in
            for _ in 0..<64 { group.addTask { try provider.refreshAfterRejection() } }
            return try await group.reduce(into: 0) { $0 += $1 ? 1 : 0 }
        }
        #expect(refreshed == 1)
    }
}

/// `APNsClient.renewCredentialsAndResend`: what the worker does with ExpiredProviderToken answers.
@Suite struct ProviderTokenRenewalTests {
    static func result(_ status: Int, _ reason: String?) -> PushResult {
        PushResult(status: status, reason: reason, outcome: DeliveryOutcome(apnsStatus: status, reason: reason))
    }

    @Test func expiredTokensAreResentOnceAfterTwentyMinutesAndOtherwiseWaitAsACredentialsProblem() async throws {
        let key = try APNsTokenProviderTests.makeKey()
        let time = APNsTokenRefreshTests.ManualClock()
        let provider = try APNsTokenProvider(keyPEM: key.pem, keyID: "ABC123DEFG", teamID: "DEF123GHIJ", clock: time.clock)
        let client = try APNsClient(configuration: APNsConfiguration(url: "https://127.0.0.1:9", credentials: .token(provider), topic: "com.example.app"),
                                    logger: Logger(label: "test"))
        _ = try provider.authorizationHeader()
        let expired = Self.result(403, "ExpiredProviderToken")

        // Minted a moment ago: APNs' 20-minute rule forbids a new one, so nothing is resent.
        var results = [Self.result(200, nil), expired, expired]
        var resent = await client.renewCredentialsAndResend(&results) { _ in
            Issue.record("resent although no new token could be minted"); return []
        }
        #expect(resent == 0)
        #expect(results.map(\.outcome) == [.sent, .credentialsProblem(reason: "ExpiredProviderToken"), .credentialsProblem(reason: "ExpiredProviderToken")])

        // Twenty minutes on: the two stale devices go out once more, and their answers take their places.
        time.advance(by: .seconds(20 * 60))
        results = [Self.result(200, nil), expired, expired]
        resent = await client.renewCredentialsAndResend(&results) { indices in
            #expect(indices == [1, 2])
            return [Self.result(200, nil), expired]
        }
        #expect(resent == 2)
        #expect(results.map(\.outcome) == [.sent, .sent, .credentialsProblem(reason: "ExpiredProviderToken")])

        // Nothing expired: no renewal, no resend.
        results = [Self.result(410, "Unregistered")]
        resent = await client.renewCredentialsAndResend(&results) { _ in Issue.record("resent without a cause"); return [] }
        #expect(resent == 0 && results[0].outcome == .tokenInvalid(reason: "Unregistered"))
        await client.shutdown()
    }
}
