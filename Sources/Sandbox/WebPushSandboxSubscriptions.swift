import Crypto
import Foundation
import NIOConcurrencyHelpers
import PushCore

/// A subscription the Web Push sandbox made, as a browser would hand it to the application
/// server: the endpoint and keys to give the worker, and the private half the sandbox decrypts with.
public struct SandboxWebPushSubscription: Sendable {
    public let id: String
    public let endpoint: String
    /// base64url, unpadded, as `PushSubscription.toJSON()` gives them.
    public let p256dh: String
    public let auth: String
    let decryptor: WebPushMessageDecryptor
    /// The VAPID public key the subscription was made with (`applicationServerKey`): messages
    /// signed with another key are refused, as browsers' push services do.
    let applicationServerKey: [UInt8]?

    /// `{"endpoint":…,"keys":{"p256dh":…,"auth":…}}`.
    public var json: String {
        #"{"endpoint":"\#(endpoint)","keys":{"p256dh":"\#(p256dh)","auth":"\#(auth)"}}"#
    }

    /// The compact form the worker reads too: `<endpoint>#p256dh=…&auth=…`.
    public var compact: String { "\(endpoint)#p256dh=\(p256dh)&auth=\(auth)" }
}

/// The subscriptions of one Web Push sandbox, and which are gone (unsubscribed: 410).
final class WebPushSandboxSubscriptions: Sendable {
    private struct State {
        var active: [String: SandboxWebPushSubscription] = [:]
        var gone: Set<String> = []
        var next = 0
    }

    private let state = NIOLockedValueBox(State())

    enum Lookup {
        case active(SandboxWebPushSubscription)
        case gone
        case unknown
    }

    func make(count: Int, origin: String, applicationServerKey: [UInt8]?) -> [SandboxWebPushSubscription] {
        (0..<count).map { _ in
            let key = P256.KeyAgreement.PrivateKey()
            var auth = [UInt8](repeating: 0, count: 16)
            var generator = SystemRandomNumberGenerator()
            for index in auth.indices { auth[index] = generator.next() }
            let id = state.withLockedValue { state -> String in
                state.next += 1
                // A random part, so ids of two sandboxes (or runs) never collide in one Redis.
                return "s\(state.next)-\(String(generator.next() as UInt32, radix: 36))"
            }
            // The key and secret are made here, so the decryptor cannot refuse them.
            let decryptor = try! WebPushMessageDecryptor(privateKey: key, authSecret: auth)
            let subscription = SandboxWebPushSubscription(
                id: id, endpoint: "\(origin)/wp/\(id)",
                p256dh: Base64.encode(Array(key.publicKey.x963Representation), urlSafe: true, padded: false),
                auth: Base64.encode(auth, urlSafe: true, padded: false),
                decryptor: decryptor, applicationServerKey: applicationServerKey)
            state.withLockedValue { $0.active[id] = subscription }
            return subscription
        }
    }

    func lookup(_ id: String) -> Lookup {
        state.withLockedValue { state in
            if let subscription = state.active[id] { return .active(subscription) }
            return state.gone.contains(id) ? .gone : .unknown
        }
    }

    /// The browser unsubscribed: from now on its endpoint answers 410 Gone.
    func unsubscribe(_ id: String) {
        state.withLockedValue { state in
            if state.active.removeValue(forKey: id) != nil { state.gone.insert(id) }
        }
    }
}
