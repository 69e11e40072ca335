import Testing
@testable import FCM

/// The assertion's clock: corrected once by the token endpoint's `Date` when the endpoint refused
/// the assertion's time, the offset kept; decided from values the test gives, no clock read.
@Suite struct FCMAssertionClockTests {
    /// 2026-11-21 20:00:00 UTC, and the same instant as a `Date` header.
    let endpointNow = 1_795_291_200
    let endpointDate = "Sat, 21 Nov 2026 20:00:00 GMT"

    @Test func aClockAnHourBehindIsCorrectedOnceAndTheOffsetKept() {
        var clock = FCMAssertionClock()
        #expect(clock.issuedAt(localSeconds: endpointNow - 3600) == endpointNow - 3600)
        #expect(clock.refused(serverDate: endpointDate, localSeconds: endpointNow - 3600, corrected: false) == .retry(skewSeconds: 3600))
        #expect(clock.offsetSeconds == 3600)
        #expect(clock.issuedAt(localSeconds: endpointNow - 3600) == endpointNow, "dated by the endpoint's clock")
        #expect(clock.issuedAt(localSeconds: endpointNow) == endpointNow + 3600, "kept for later assertions")
    }

    @Test func aClockAheadIsCorrectedBackwards() {
        var clock = FCMAssertionClock()
        #expect(clock.refused(serverDate: endpointDate, localSeconds: endpointNow + 7200, corrected: false) == .retry(skewSeconds: -7200))
        #expect(clock.issuedAt(localSeconds: endpointNow + 7200) == endpointNow)
    }

    /// Never a loop: the retry's own refusal is reported, whatever its `Date` says.
    @Test func theRetrysRefusalIsReported() {
        var clock = FCMAssertionClock()
        _ = clock.refused(serverDate: endpointDate, localSeconds: endpointNow - 3600, corrected: false)
        #expect(clock.refused(serverDate: endpointDate, localSeconds: endpointNow - 7200, corrected: true) == .report)
        #expect(clock.offsetSeconds == 3600, "unchanged by a refusal it reports")
    }

    @Test func clocksThatAgreeOrNoDateAreReportedNotRetried() {
        var clock = FCMAssertionClock()
        #expect(clock.refused(serverDate: endpointDate, localSeconds: endpointNow - 1, corrected: false) == .report,
                "a second is the Date header's resolution, not skew")
        #expect(clock.refused(serverDate: nil, localSeconds: endpointNow - 3600, corrected: false) == .report)
        #expect(clock.refused(serverDate: "an hour ago", localSeconds: endpointNow - 3600, corrected: false) == .report)
        #expect(clock.offsetSeconds == 0)
    }

    /// The offset kept from an earlier correction is what the next refusal is compared with: a
    /// clock set right since (NTP) is corrected back to no offset, once.
    @Test func aClockSetRightSinceIsCorrectedBack() {
        var clock = FCMAssertionClock()
        _ = clock.refused(serverDate: endpointDate, localSeconds: endpointNow - 3600, corrected: false)
        #expect(clock.refused(serverDate: endpointDate, localSeconds: endpointNow, corrected: false) == .retry(skewSeconds: 0))
        #expect(clock.offsetSeconds == 0)
        #expect(clock.refused(serverDate: endpointDate, localSeconds: endpointNow, corrected: false) == .report, "offset already right")
    }

    @Test(arguments: [
        // Google's words over the years (google-api-php-client#1429, gsheets#96, pyjwt#212).
        ("invalid_grant", "Invalid JWT: Token must be a short-lived token (60 minutes) and in a reasonable timeframe. Check your iat and exp values and use a clock with skew to account for clock differences between systems.", true),
        ("invalid_grant", "Invalid JWT: Token must be a short-lived token (60 minutes) and in a reasonable timeframe. Check your iat and exp values in the JWT claim.", true),
        ("invalid_grant", "Invalid JWT: Token must be a short-lived token and in a reasonable timeframe", true),
        ("invalid_grant", "Invalid JWT Signature.", false),
        ("invalid_grant", "Invalid grant: account not found", false),
        ("invalid_scope", "Invalid JWT: Token must be a short-lived token (60 minutes)", false),
    ])
    func googlesTimeframeRefusalIsRecognised(_ error: String, _ description: String, _ isTimeframe: Bool) {
        #expect(FCMAssertionClock.isTimeframeRefusal(error: error, description: description) == isTimeframe)
    }
}
