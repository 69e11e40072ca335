import Crypto
import NIOConcurrencyHelpers
import GatewayCore

/// The gateway's bearer keys: who a request is, which apps it may use, and how fast.
final class APIKeyring: Sendable {
    struct Key: Sendable {
        let name: String
        let apps: Set<String>?

        func allows(app: String) -> Bool { apps?.contains(app) ?? true }
    }

    /// By the SHA-256 of the secret: the lookup compares digests, so its timing says nothing
    /// about how much of a guessed secret was right.
    private let keys: [[UInt8]: Key]
    private let buckets: NIOLockedValueBox<[String: RateLimitBucket]>

    /// - Parameter previous: the keyring a reload replaces: a key kept with the same rate keeps
    ///   its bucket, so a reload gives no one a fresh burst.
    init(_ loaded: [LoadedAPIKey], defaultRate: Int, defaultBurst: Int, now: Duration, carrying previous: APIKeyring? = nil) {
        let kept = previous?.buckets.withLockedValue { $0 } ?? [:]
        var keys = [[UInt8]: Key]()
        var buckets = [String: RateLimitBucket]()
        for key in loaded {
            keys[Array(SHA256.hash(data: Array(key.secret.utf8)))] = Key(name: key.name, apps: key.apps)
            let rate = key.requestsPerSecond ?? defaultRate
            let fresh = RateLimitBucket(rate: rate, burst: key.burst ?? max(rate, defaultBurst), now: now)
            if let old = kept[key.name], old.rate == fresh.rate, old.burst == fresh.burst {
                buckets[key.name] = old
            } else {
                buckets[key.name] = fresh
            }
        }
        self.keys = keys
        self.buckets = NIOLockedValueBox(buckets)
    }

    var isEmpty: Bool { keys.isEmpty }

    /// The key an `Authorization: Bearer …` header presents, or nil.
    func key(authorization: String?) -> Key? {
        guard let authorization else { return nil }
        let parts = authorization.split(separator: " ", maxSplits: 1)
        guard parts.count == 2, parts[0].lowercased() == "bearer" else { return nil }
        let secret = parts[1].trimmingSpaces
        return keys[Array(SHA256.hash(data: Array(secret.utf8)))]
    }

    func take(for key: Key, now: Duration) -> RateLimitBucket.Decision {
        buckets.withLockedValue { buckets in buckets[key.name]?.take(now: now) ?? .allowed }
    }
}

extension Substring {
    fileprivate var trimmingSpaces: Substring {
        var text = self
        while text.first == " " { text.removeFirst() }
        while text.last == " " { text.removeLast() }
        return text
    }
}
