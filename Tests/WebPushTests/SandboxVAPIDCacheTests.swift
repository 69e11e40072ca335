import Testing
@testable import Sandbox
@testable import WebPush

/// The Web Push sandbox checks a VAPID token once and then recognises it: only the same
/// `Authorization` value for the same origin is a hit, and `exp` is read against the clock on every use.
@Suite struct SandboxVAPIDCacheTests {
    static let origin = "https://push.example"

    @Test func onlyTheVerifiedValueForItsOriginIsAHit() throws {
        let clock = ManualClock(1_800_000_000)
        let header = try VAPIDTests.cache(clock: clock).authorizationHeader(forEndpoint: Self.origin + "/x")
        let cache = SandboxVAPIDCache()
        let first = try cache.verify(authorization: header, origin: Self.origin, now: clock.now)
        #expect(try cache.verify(authorization: header, origin: Self.origin, now: clock.now).expiresAt == first.expiresAt)
        // Another origin: the audience is wrong, cached or not.
        #expect(throws: SandboxVAPIDVerifier.Refusal.self) { try cache.verify(authorization: header, origin: "https://other.example", now: clock.now) }
        // One signature character changed: not the verified value, so verified again, and refused.
        var tampered = Array(header.utf8)
        let index = try #require(tampered.lastIndex(of: UInt8(ascii: ".")).map { $0 + 5 })
        tampered[index] = tampered[index] == UInt8(ascii: "A") ? UInt8(ascii: "B") : UInt8(ascii: "A")
        #expect(throws: SandboxVAPIDVerifier.Refusal.self) {
            try cache.verify(authorization: String(decoding: tampered, as: UTF8.self), origin: Self.origin, now: clock.now)
        }
        #expect(throws: SandboxVAPIDVerifier.Refusal.self) { try cache.verify(authorization: nil, origin: Self.origin, now: clock.now) }
    }

    @Test func aCachedTokenExpiresOnTime() throws {
        let clock = ManualClock(1_800_000_000)
        let header = try VAPIDTests.cache(clock: clock).authorizationHeader(forEndpoint: Self.origin + "/x")
        let cache = SandboxVAPIDCache()
        let verified = try cache.verify(authorization: header, origin: Self.origin, now: clock.now)
        #expect(throws: Never.self) { try cache.verify(authorization: header, origin: Self.origin, now: verified.expiresAt - 1) }
        let refusal = #expect(throws: SandboxVAPIDVerifier.Refusal.self) {
            try cache.verify(authorization: header, origin: Self.origin, now: verified.expiresAt)
        }
        #expect(refusal?.status == 403)
    }
}
