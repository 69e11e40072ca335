import PushCore

/// The clock the OAuth assertion is dated by. Its `iat` and `exp` come from this machine's wall
/// clock, and Google's token endpoint refuses an assertion outside its own window (HTTP 400
/// `invalid_grant`, "Invalid JWT: Token must be a short-lived token (60 minutes) and in a reasonable
/// timeframe. Check your iat and exp values …"): a clock an hour off gets no access token. Such a
/// refusal is corrected once by the answer's `Date` header, and the offset kept for later
/// assertions; a second refusal is reported as any refusal is.
struct FCMAssertionClock: Equatable {
    /// Below this the difference is the `Date` header's whole seconds and the round trip, not skew:
    /// such a refusal has another cause.
    static let smallestCorrection = 2

    /// Seconds to add to this machine's clock to read the endpoint's.
    private(set) var offsetSeconds = 0

    /// The assertion's `iat` when this machine's clock says `localSeconds`.
    func issuedAt(localSeconds: Int) -> Int { localSeconds + offsetSeconds }

    enum Verdict: Equatable {
        /// Sign again by the endpoint's clock, which is `skewSeconds` ahead of this one (behind if negative).
        case retry(skewSeconds: Int)
        /// Report the refusal: this fetch was corrected already, the answer has no usable `Date`, or
        /// the clocks agree.
        case report
    }

    /// The endpoint refused an assertion as outside its timeframe.
    /// - Parameters:
    ///   - serverDate: the answer's `Date` header.
    ///   - localSeconds: this machine's clock when the answer came.
    ///   - corrected: this fetch has been corrected once already.
    mutating func refused(serverDate: String?, localSeconds: Int, corrected: Bool) -> Verdict {
        guard !corrected, let serverDate, let server = HTTPDate.unixSeconds(serverDate) else { return .report }
        let skew = server - localSeconds
        guard abs(skew - offsetSeconds) >= Self.smallestCorrection else { return .report }
        offsetSeconds = skew
        return .retry(skewSeconds: skew)
    }

    /// Google's words for an assertion dated outside its window, as its token endpoint has said them
    /// over the years (with "… in the JWT claim." or "… and use a clock with skew …" at the end).
    static func isTimeframeRefusal(error: String?, description: String?) -> Bool {
        guard error == "invalid_grant", let description else { return false }
        return ["short-lived token", "reasonable timeframe", "iat and exp"].contains { description.contains($0) }
    }
}
