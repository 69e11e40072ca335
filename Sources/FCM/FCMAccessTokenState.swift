/// When to fetch an access token and what to do with the endpoint's answer: the decisions of
/// `FCMAccessTokenSource`, as a value its tests drive with their own clock. One token serves every
/// request of the app; it is fetched again 5 minutes before it expires (or half-way through a
/// lifetime shorter than 10 minutes), one fetch at a time; a token FCM refused is dropped; after
/// the endpoint refused the service account, requests are told so for `refusalPause` without
/// asking again (each ask would fail the same way, and a job of many devices would ask per device).
struct FCMAccessTokenState {
    typealias Instant = ContinuousClock.Instant

    static let refreshMargin: Duration = .seconds(300)
    static let refusalPause: Duration = .seconds(30)

    enum Decision: Equatable {
        /// Send with this token.
        case use(String)
        /// Nobody is fetching: the caller fetches, and is told the result like every waiter.
        case fetch
        /// A fetch is under way: wait for its result.
        case wait
        case fail(FCMAccessTokenError)
    }

    private(set) var token: String?
    /// When to fetch the next one; the current one still works until `expiresAt`.
    private(set) var refreshAt: Instant?
    private(set) var expiresAt: Instant?
    private(set) var fetching = false
    private var refusal: (error: FCMAccessTokenError, until: Instant)?

    /// What a request that needs a token does now.
    mutating func next(now: Instant) -> Decision {
        let usable = usableToken(now: now)
        if let usable, let refreshAt, now < refreshAt { return .use(usable) }
        if fetching { return usable.map(Decision.use) ?? .wait }
        if let refusal, now < refusal.until { return usable.map(Decision.use) ?? .fail(refusal.error) }
        fetching = true
        // The current token keeps serving while its successor is fetched: only one caller waits.
        return .fetch
    }

    /// FCM answered 401 to a request sent with `token`: it is dropped, so the next request
    /// fetches a new one. A token already replaced is left alone (many requests fail together).
    mutating func rejected(token rejected: String) {
        guard token == rejected else { return }
        token = nil
        refreshAt = nil
        expiresAt = nil
    }

    /// The fetch ended; returns what its waiters are told.
    mutating func fetched(_ result: Result<(token: String, lifetime: Duration), FCMAccessTokenError>, now: Instant) -> Result<String, FCMAccessTokenError> {
        fetching = false
        switch result {
        case let .success((newToken, lifetime)):
            token = newToken
            expiresAt = now + lifetime
            refreshAt = now + (lifetime > Self.refreshMargin * 2 ? lifetime - Self.refreshMargin : lifetime / 2)
            refusal = nil
            return .success(newToken)
        case let .failure(error):
            if error.code == .refused { refusal = (error, now + Self.refusalPause) }
            // A token that has not expired yet still works until its end.
            return usableToken(now: now).map { .success($0) } ?? .failure(error)
        }
    }

    private func usableToken(now: Instant) -> String? {
        guard let token, let expiresAt, now < expiresAt else { return nil }
        return token
    }
}
