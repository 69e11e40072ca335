import _CryptoExtras
import Foundation
import Logging

/// The service account the FCM mode accepts: an RSA key made on first start and kept in the state
/// directory, and the key file (Google's JSON) a worker or google-auth reads. The key file is
/// rewritten at every start because its `token_uri` names the port the sandbox bound.
public struct FCMSandboxMaterial: Sendable, Hashable {
    public static let privateKeyID = "sandbox0000000000000000000000000000000001"

    /// The service-account JSON (`type`, `project_id`, `private_key_id`, `private_key`, `client_email`, `token_uri`).
    public let serviceAccountFile: String
    let privateKeyFile: String

    public init(stateDirectory: String) {
        func file(_ name: String) -> String {
            stateDirectory.hasSuffix("/") ? stateDirectory + name : stateDirectory + "/" + name
        }
        self.serviceAccountFile = file("fcm-service-account.json")
        self.privateKeyFile = file("fcm-service-account-key.pem")
    }

    /// The key (made if missing) and the key file naming `tokenURI`; returns the public key.
    func write(configuration: FCMSandboxConfiguration, tokenURI: String, logger: Logger) throws -> _RSA.Signing.PublicKey {
        let key: _RSA.Signing.PrivateKey
        if let pem = try? String(contentsOfFile: self.privateKeyFile, encoding: .utf8), let existing = try? _RSA.Signing.PrivateKey(pemRepresentation: pem) {
            key = existing
        } else {
            key = try _RSA.Signing.PrivateKey(keySize: .bits2048)
            try Self.write(key.pkcs8PEMRepresentation, to: self.privateKeyFile)
            logger.info("sandbox: created the FCM service-account key", metadata: ["file": "\(self.privateKeyFile)"])
        }
        let members: [String: String] = [
            "type": "service_account", "project_id": configuration.projectID, "private_key_id": Self.privateKeyID,
            "private_key": key.pkcs8PEMRepresentation, "client_email": configuration.clientEmail, "client_id": "100000000000000000001",
            "auth_uri": "https://accounts.google.com/o/oauth2/auth", "token_uri": tokenURI,
        ]
        let json = try JSONSerialization.data(withJSONObject: members, options: [.sortedKeys, .prettyPrinted, .withoutEscapingSlashes])
        try Self.write(String(decoding: json, as: UTF8.self), to: self.serviceAccountFile)
        return key.publicKey
    }

    private static func write(_ text: String, to path: String) throws {
        // Both files hold the private key.
        guard FileManager.default.createFile(atPath: path, contents: Data(text.utf8), attributes: [.posixPermissions: 0o600]) else {
            throw SandboxError(message: "cannot write \(path)")
        }
    }
}
