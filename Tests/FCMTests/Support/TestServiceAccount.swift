import Crypto
import _CryptoExtras
import Foundation

/// Service-account key files for tests: a fresh RSA key (made once per test process) in the JSON
/// shape Firebase's console downloads.
enum TestServiceAccount {
    static let rsaKey: _RSA.Signing.PrivateKey = {
        do { return try _RSA.Signing.PrivateKey(keySize: .bits2048) } catch { fatalError("cannot make an RSA test key: \(error)") }
    }()

    static var privateKeyPEM: String { rsaKey.pkcs8PEMRepresentation }

    static let projectID = "pushworker-test"
    static let clientEmail = "sender@pushworker-test.iam.gserviceaccount.com"
    static let keyID = "0123456789abcdef0123456789abcdef01234567"

    /// The members of a valid key file, to change one at a time.
    static func members(tokenURI: String = "https://oauth2.googleapis.com/token") -> [String: Any] {
        [
            "type": "service_account", "project_id": projectID, "private_key_id": keyID, "private_key": privateKeyPEM,
            "client_email": clientEmail, "client_id": "1234567890", "auth_uri": "https://accounts.google.com/o/oauth2/auth",
            "token_uri": tokenURI,
        ]
    }

    static func json(_ members: [String: Any]) -> [UInt8] {
        // JSONSerialization escapes the key's newlines as \n, as Google's files have them.
        Array((try? JSONSerialization.data(withJSONObject: members, options: [.sortedKeys])) ?? Data())
    }
}
