import Crypto
import PushCore
import Sandbox
import WebPush

/// A browser's side of a subscription, made fresh: the key pair and auth secret a user agent
/// would create, the keys the worker is given, and a decryptor that plays the browser.
struct TestSubscription {
    let privateKey: P256.KeyAgreement.PrivateKey
    let auth: [UInt8]
    let keys: WebPushSubscriptionKeys

    init() throws {
        privateKey = P256.KeyAgreement.PrivateKey()
        var generator = SystemRandomNumberGenerator()
        auth = (0..<16).map { _ in UInt8.random(in: .min ... .max, using: &generator) }
        keys = try WebPushSubscriptionKeys(p256dh: Array(privateKey.publicKey.x963Representation), auth: auth)
    }

    func decryptor() throws -> WebPushMessageDecryptor {
        try WebPushMessageDecryptor(privateKey: privateKey, authSecret: auth)
    }

    var privateKeyBase64URL: String { Base64.encode(privateKey.rawRepresentation, urlSafe: true, padded: false) }
    var authBase64URL: String { Base64.encode(auth, urlSafe: true, padded: false) }
}

/// base64url text the tests write their fixed values in.
func base64URL(_ text: String) -> [UInt8] {
    guard let bytes = Base64.decode(text) else { fatalError("a test constant is not base64url: \(text)") }
    return bytes
}
