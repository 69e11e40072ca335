@testable import Sandbox
import Testing

/// A connection's provider-token changes against the configured minimum update interval.
@Suite struct ProviderTokenCacheTests {
    typealias Signed = SandboxFuzzRegressionTests

    @Test func aTokenChangeSoonerThanTheIntervalIsTooManyUpdatesAndLaterIsAccepted() throws {
        var cache = ProviderTokenCache(minimumUpdateInterval: .seconds(7))
        let keyring = try Signed.keyring()
        let start = ContinuousClock.now
        let first = try Signed.authorization(claims: #"{"iss":"\#(Signed.teamID)","iat":\#(Signed.now)}"#)
        let second = try Signed.authorization(claims: #"{"iss":"\#(Signed.teamID)","iat":\#(Signed.now + 6)}"#)
        let adopted = cache.authenticate(authorization: first, keyring: keyring, now: start, epochSeconds: Signed.now)
        #expect(adopted == .valid(VerifiedProviderToken(keyID: Signed.keyID, issuedAt: Signed.now)))
        #expect(cache.acceptedToken?.jwt == String(first.dropFirst("bearer ".count)))
        #expect(cache.acceptedToken?.teamID == Signed.teamID)
        let early = cache.authenticate(authorization: second, keyring: keyring, now: start + .seconds(6), epochSeconds: Signed.now + 6)
        #expect(early == .rejected(.tooManyProviderTokenUpdates))
        let onTime = cache.authenticate(authorization: second, keyring: keyring, now: start + .seconds(7), epochSeconds: Signed.now + 7)
        #expect(onTime == .valid(VerifiedProviderToken(keyID: Signed.keyID, issuedAt: Signed.now + 6)))
        #expect(cache.acceptedToken?.jwt == String(second.dropFirst("bearer ".count)))
    }

    @Test func theDefaultIntervalIsAPNsTwentyMinutes() {
        #expect(ProviderTokenCache().minimumUpdateInterval == .seconds(20 * 60))
        #expect(SandboxConfiguration().providerTokenMinimumUpdateInterval == .seconds(20 * 60))
    }
}
