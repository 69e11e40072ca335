import Crypto
import _CryptoExtras
import Foundation
import Testing
@testable import FCM

private func problem(_ members: [String: Any]) -> FCMConfigurationError? {
    do {
        _ = try FCMServiceAccount(json: TestServiceAccount.json(members))
        return nil
    } catch {
        return error
    }
}

private func changed(_ name: String, to value: Any?) -> [String: Any] {
    var members = TestServiceAccount.members()
    members[name] = value
    return members
}

@Suite("FCMServiceAccount: the key file, every problem named by its member")
struct FCMServiceAccountTests {
    @Test("a Firebase key file is read")
    func valid() throws {
        let account = try FCMServiceAccount(json: TestServiceAccount.json(TestServiceAccount.members()))
        #expect(account.projectID == TestServiceAccount.projectID)
        #expect(account.clientEmail == TestServiceAccount.clientEmail)
        #expect(account.privateKeyID == TestServiceAccount.keyID)
        #expect(account.tokenURI == "https://oauth2.googleapis.com/token")
        #expect(account.description == "service account \(TestServiceAccount.clientEmail) (project pushworker-test, key \(TestServiceAccount.keyID))")
        #expect(account.publicKeyPEM.hasPrefix("-----BEGIN PUBLIC KEY-----"))
    }

    @Test("each member's problem names it", arguments: [
        ("type", nil, "type: is missing"),
        ("type", "authorized_user", "type: must be \"service_account\", got \"authorized_user\" (an OAuth client or user credentials file cannot send)"),
        ("project_id", nil, "project_id: is missing"),
        ("project_id", "", "project_id: is empty"),
        ("project_id", "My Project", "project_id: must be a Google Cloud project ID (a–z, 0–9, '-', ':', '.'), got \"My Project\""),
        ("private_key_id", nil, "private_key_id: is missing"),
        ("private_key_id", "a b", "private_key_id: must be printable ASCII without spaces or quotes"),
        ("private_key", nil, "private_key: is missing"),
        ("private_key", "", "private_key: is empty"),
        ("private_key", "not a key", "private_key: not an RSA private key in PEM"),
        ("client_email", nil, "client_email: is missing"),
        ("client_email", "sender", "client_email: must be the service account's e-mail address, got \"sender\""),
        ("token_uri", nil, "token_uri: is missing"),
        ("token_uri", "http://oauth2.googleapis.com/token", "token_uri: must be an https URL such as https://oauth2.googleapis.com/token (the scheme must be https://)"),
    ] as [(String, String?, String)])
    func memberProblems(_ name: String, _ value: String?, _ expected: String) {
        #expect(problem(changed(name, to: value))?.description == expected)
    }

    @Test("a member that is not a string says what it is")
    func notAString() {
        #expect(problem(changed("project_id", to: 42))?.description == "project_id: must be a string, got a number")
        #expect(problem(changed("private_key", to: ["k": "v"]))?.description == "private_key: must be a string, got an object")
    }

    @Test("an EC key is not an RSA key")
    func ecKey() {
        let ec = P256.Signing.PrivateKey().pemRepresentation
        #expect(problem(changed("private_key", to: ec))?.description == "private_key: not an RSA private key in PEM (RS256 needs RSA)")
    }

    @Test("a 1024-bit RSA key is too short")
    func shortKey() throws {
        let short = try _RSA.Signing.PrivateKey(unsafeKeySize: .init(bitCount: 1024)).pkcs8PEMRepresentation
        #expect(problem(changed("private_key", to: short))?.description == "private_key: is a 1024-bit RSA key; at least 2048 bits are needed")
    }

    @Test("an encrypted key is refused, never prompted for")
    func encryptedKey() {
        let encrypted = "-----BEGIN ENCRYPTED PRIVATE KEY-----\nMIIBvTBXBgkqhkiG9w0BBQ0wSjApBgkqhkiG9w0BBQwwHAQI\n-----END ENCRYPTED PRIVATE KEY-----\n"
        let refused = problem(changed("private_key", to: encrypted))?.description ?? ""
        #expect(refused.hasPrefix("private_key: "))
    }

    @Test("not JSON, or not an object")
    func notJSON() {
        #expect((try? FCMServiceAccount(json: Array("[1]".utf8))) == nil)
        do {
            _ = try FCMServiceAccount(json: Array("{".utf8))
            Issue.record("accepted a broken file")
        } catch {
            #expect(error.description == "the service-account file is not a JSON object (expected the key file downloaded from the Firebase console)")
        }
    }

    @Test("no message or description holds the private key")
    func keyNeverShown() throws {
        let pem = TestServiceAccount.privateKeyPEM
        let keyBody = pem.split(separator: "\n").dropFirst().first.map(String.init) ?? "x"
        for name in FCMServiceAccount.requiredMembers {
            let text = problem(changed(name, to: 7))?.description ?? ""
            #expect(!text.contains(keyBody), "\(name)")
        }
        let account = try FCMServiceAccount(json: TestServiceAccount.json(TestServiceAccount.members()))
        #expect(!account.description.contains(keyBody))
        #expect(!"\(account)".contains(keyBody))
        #expect(!String(reflecting: account).contains("PRIVATE KEY"))
    }

    @Test("a file that cannot be read names its path")
    func missingFile() {
        do {
            _ = try FCMServiceAccount(contentsOfFile: "/nonexistent/sa.json")
            Issue.record("read a missing file")
        } catch {
            #expect(error.description == "service-account file: cannot read /nonexistent/sa.json")
        }
    }
}
