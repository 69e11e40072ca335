import Crypto

/// The provider-token keys the sandbox accepts, by key ID.
struct SandboxKeyring: Sendable {
    struct Key: Sendable {
        let teamID: String
        /// X9.63 bytes: swift-crypto's key types are not Sendable here, and keys are only
        /// rebuilt when a connection presents a token it has not verified yet.
        let publicKey: [UInt8]
    }

    let keys: [String: Key]

    /// Accepts a public key PEM, or a `.p8` private key PEM whose public half is used.
    init(_ tokenKeys: [SandboxTokenKey]) throws {
        var keys: [String: Key] = [:]
        for tokenKey in tokenKeys {
            let publicKey: P256.Signing.PublicKey
            if let parsed = try? P256.Signing.PublicKey(pemRepresentation: tokenKey.publicKeyPEM) {
                publicKey = parsed
            } else {
                publicKey = try P256.Signing.PrivateKey(pemRepresentation: tokenKey.publicKeyPEM).publicKey
            }
            keys[tokenKey.keyID] = Key(teamID: tokenKey.teamID, publicKey: Array(publicKey.x963Representation))
        }
        self.keys = keys
    }
}
