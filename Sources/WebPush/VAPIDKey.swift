import PushCore

/// The application server's long-lived P-256 key (RFC 8292 §2–3). Browsers subscribe with its
/// public half (`applicationServerKey`); its private half signs the VAPID tokens. Loaded from the
/// form web-push libraries write: the 32-byte private scalar in base64url.
public struct VAPIDKey: Sendable, CustomStringConvertible {
    private let key: P256Key
    /// 0x04 ‖ X ‖ Y, 65 bytes: the `k` parameter and the browser's `applicationServerKey`.
    public let publicKey: [UInt8]

    /// From the base64url private scalar (`vapid.privateKey`).
    public init(privateKeyBase64URL text: String) throws(WebPushError) {
        guard let scalar = Base64.decode(text) else {
            throw WebPushError(.invalidVAPIDKey, field: "vapid.privateKey", "is not base64url")
        }
        try self.init(privateKey: scalar)
    }

    /// From the 32-byte big-endian private scalar.
    public init(privateKey scalar: [UInt8]) throws(WebPushError) {
        guard scalar.count == P256Key.scalarLength else {
            throw WebPushError(.invalidVAPIDKey, field: "vapid.privateKey",
                               "must be a 32-byte P-256 private key (43 base64url characters), got \(scalar.count) bytes")
        }
        guard let key = try P256Key.keyPair(privateScalar: scalar) else {
            throw WebPushError(.invalidVAPIDKey, field: "vapid.privateKey", "is not a valid P-256 private key (zero, or not below the group order)")
        }
        try self.init(key)
    }

    private init(_ key: P256Key) throws(WebPushError) {
        self.key = key
        self.publicKey = try key.uncompressedPublicKey()
    }

    /// A new key pair.
    public static func generate() throws(WebPushError) -> VAPIDKey {
        try VAPIDKey(P256Key.generate())
    }

    /// A new key pair as the two base64url strings a configuration holds: the public key for the
    /// web page's `applicationServerKey`, the private key for `vapid.privateKey`.
    public static func generateBase64URLPair() throws(WebPushError) -> (publicKey: String, privateKey: String) {
        let key = try generate()
        return (key.publicKeyBase64URL, try key.privateKeyBase64URL())
    }

    public var publicKeyBase64URL: String { Base64.encode(publicKey, urlSafe: true, padded: false) }

    /// The secret: for writing a new key into a configuration, never for logs.
    public func privateKeyBase64URL() throws(WebPushError) -> String {
        Base64.encode(try key.privateScalar(), urlSafe: true, padded: false)
    }

    /// The raw r ‖ s ES256 signature of `message`.
    func sign(_ message: [UInt8]) throws(WebPushError) -> [UInt8] {
        try key.signES256(message)
    }

    /// Names the key by its public half only.
    public var description: String { "VAPIDKey(public: \(publicKeyBase64URL))" }
}
