import NIOConcurrencyHelpers

/// VAPID tokens the Web Push sandbox has verified, so that a sender's token is checked once, not
/// on every message: a worker signs one token per push service and reuses it for up to a day, as
/// RFC 8292 §2 intends, and real services need not verify a signature they have already seen.
/// Verifying the ES256 signature was a third of the sandbox's CPU per message, and the sandbox
/// (one event loop) set the rate of `ops/bench-platforms`' Web Push run.
///
/// A hit is the exact `Authorization` value already verified for this origin: the `exp` claim is
/// compared with the clock again on every use, and revocation and key checks run after this.
final class SandboxVAPIDCache: Sendable {
    private struct Key: Hashable {
        let authorization: String
        let origin: String
    }

    private let verified = NIOLockedValueBox([Key: SandboxVAPIDVerifier.Verified]())
    /// Distinct tokens kept; past it the cache starts again. A sender needs one per key and origin.
    static let capacity = 1_024

    func verify(authorization: String?, origin: String, now: Int) throws(SandboxVAPIDVerifier.Refusal) -> SandboxVAPIDVerifier.Verified {
        guard let authorization else { return try SandboxVAPIDVerifier.verify(authorization: nil, origin: origin, now: now) }
        let key = Key(authorization: authorization, origin: origin)
        if let known = verified.withLockedValue({ $0[key] }), known.expiresAt > now { return known }
        let fresh = try SandboxVAPIDVerifier.verify(authorization: authorization, origin: origin, now: now)
        verified.withLockedValue { table in
            if table.count >= Self.capacity { table.removeAll(keepingCapacity: true) }
            table[key] = fresh
        }
        return fresh
    }
}
