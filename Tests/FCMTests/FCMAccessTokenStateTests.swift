import Testing
@testable import FCM

private let start = ContinuousClock.now
private let refused = FCMAccessTokenError(code: .refused, "refused")
private let unreachable = FCMAccessTokenError(code: .unavailable, "unreachable")

@Suite("FCMAccessTokenState: when to fetch, what to do with the answer")
struct FCMAccessTokenStateTests {
    @Test("the first request fetches, the others wait, and all get the fetched token")
    func singleFlight() {
        var state = FCMAccessTokenState()
        #expect(state.next(now: start) == .fetch)
        #expect(state.next(now: start) == .wait)
        #expect(state.next(now: start + .seconds(1)) == .wait)
        #expect(state.fetched(.success(("t1", .seconds(3600))), now: start + .seconds(1)) == .success("t1"))
        #expect(state.next(now: start + .seconds(2)) == .use("t1"))
    }

    @Test("cached until 5 minutes before expiry; the old token serves while the next is fetched")
    func refreshMargin() {
        var state = FCMAccessTokenState()
        _ = state.next(now: start)
        _ = state.fetched(.success(("t1", .seconds(3600))), now: start)
        #expect(state.next(now: start + .seconds(3299)) == .use("t1"))
        #expect(state.next(now: start + .seconds(3300)) == .fetch)
        #expect(state.next(now: start + .seconds(3301)) == .use("t1"), "no one waits while t1 still works")
        #expect(state.fetched(.success(("t2", .seconds(3600))), now: start + .seconds(3302)) == .success("t2"))
        #expect(state.next(now: start + .seconds(3303)) == .use("t2"))
    }

    @Test("a token shorter-lived than 10 minutes is refreshed half-way")
    func shortLifetime() {
        var state = FCMAccessTokenState()
        _ = state.next(now: start)
        _ = state.fetched(.success(("t1", .seconds(60))), now: start)
        #expect(state.next(now: start + .seconds(29)) == .use("t1"))
        #expect(state.next(now: start + .seconds(30)) == .fetch)
    }

    @Test("past expiry nobody uses the old token: they wait for the fetch")
    func expired() {
        var state = FCMAccessTokenState()
        _ = state.next(now: start)
        _ = state.fetched(.success(("t1", .seconds(3600))), now: start)
        #expect(state.next(now: start + .seconds(3600)) == .fetch)
        #expect(state.next(now: start + .seconds(3601)) == .wait)
    }

    @Test("a rejected token is dropped; a rejection of an older token changes nothing")
    func rejected() {
        var state = FCMAccessTokenState()
        _ = state.next(now: start)
        _ = state.fetched(.success(("t1", .seconds(3600))), now: start)
        state.rejected(token: "t0")
        #expect(state.next(now: start + .seconds(1)) == .use("t1"))
        state.rejected(token: "t1")
        #expect(state.next(now: start + .seconds(1)) == .fetch)
        #expect(state.next(now: start + .seconds(1)) == .wait)
    }

    @Test("after a refusal, requests are told for 30 s without asking the endpoint again")
    func refusalPause() {
        var state = FCMAccessTokenState()
        _ = state.next(now: start)
        #expect(state.fetched(.failure(refused), now: start) == .failure(refused))
        #expect(state.next(now: start + .seconds(29)) == .fail(refused))
        #expect(state.next(now: start + .seconds(30)) == .fetch)
    }

    @Test("an unreachable endpoint is asked again by the next request; a still valid token keeps serving")
    func unavailable() {
        var state = FCMAccessTokenState()
        _ = state.next(now: start)
        #expect(state.fetched(.failure(unreachable), now: start) == .failure(unreachable))
        #expect(state.next(now: start) == .fetch)
        _ = state.fetched(.success(("t1", .seconds(3600))), now: start)
        #expect(state.next(now: start + .seconds(3300)) == .fetch)
        #expect(state.fetched(.failure(unreachable), now: start + .seconds(3301)) == .success("t1"))
        #expect(state.fetched(.failure(refused), now: start + .seconds(3302)) == .success("t1"))
        #expect(state.next(now: start + .seconds(3303)) == .use("t1"), "a refusal does not take a working token away")
    }
}

@Suite("FCMThrottle: slower after 429s, faster again gradually")
struct FCMThrottleTests {
    @Test("unthrottled, the capacity is the limit")
    func open() {
        var throttle = FCMThrottle()
        #expect(throttle.limit(capacity: 400, now: start) == 400)
        #expect(throttle.window == nil)
    }

    @Test("a 429 halves the window, a burst within a second counts once")
    func cut() {
        var throttle = FCMThrottle()
        throttle.quotaExceeded(capacity: 400, now: start)
        #expect(throttle.window == 200)
        throttle.quotaExceeded(capacity: 400, now: start + .milliseconds(500))
        #expect(throttle.window == 200)
        throttle.quotaExceeded(capacity: 400, now: start + .seconds(1))
        #expect(throttle.window == 125, "a quiet second grew it to 250 first")
        #expect(throttle.limit(capacity: 400, now: start + .seconds(1)) == 125)
    }

    @Test("each quiet second grows the window by a quarter until the throttle lets go")
    func recovery() {
        var throttle = FCMThrottle()
        throttle.quotaExceeded(capacity: 400, now: start)
        #expect(throttle.limit(capacity: 400, now: start + .milliseconds(999)) == 200)
        #expect(throttle.limit(capacity: 400, now: start + .seconds(1)) == 250)
        #expect(throttle.limit(capacity: 400, now: start + .seconds(2)) == 312)
        #expect(throttle.limit(capacity: 400, now: start + .seconds(3)) == 390)
        #expect(throttle.limit(capacity: 400, now: start + .seconds(4)) == 400)
        #expect(throttle.window == nil)
    }

    @Test("the window never drops below one request")
    func floor() {
        var throttle = FCMThrottle()
        for second in 0..<20 { throttle.quotaExceeded(capacity: 8, now: start + .seconds(second)) }
        #expect(throttle.window == 1)
        #expect(throttle.limit(capacity: 8, now: start + .seconds(19)) == 1)
    }

    @Test("a smaller capacity caps the window")
    func capped() {
        var throttle = FCMThrottle()
        throttle.quotaExceeded(capacity: 400, now: start)
        #expect(throttle.limit(capacity: 50, now: start) == 50)
    }
}

@Suite("FCMTokenEndpointAnswer: the token endpoint's answers")
struct FCMTokenEndpointAnswerTests {
    private func read(_ status: Int, _ body: String) -> FCMTokenEndpointAnswer {
        FCMTokenEndpointAnswer(status: status, body: Array(body.utf8), clientEmail: "sender@p.iam.gserviceaccount.com", endpoint: "https://oauth2.googleapis.com/token")
    }

    @Test("200 with access_token and expires_in")
    func token() {
        #expect(read(200, #"{"access_token":"ya29.abc","expires_in":3599,"token_type":"Bearer"}"#) == .token(accessToken: "ya29.abc", lifetime: .seconds(3599)))
        #expect(read(200, #"{"access_token":"ya29.abc"}"#) == .token(accessToken: "ya29.abc", lifetime: .seconds(3600)))
    }

    @Test("200 without a usable token is the endpoint's failure")
    func noToken() {
        #expect(read(200, "{}") == .failure(FCMAccessTokenError(code: .unavailable, "the token endpoint https://oauth2.googleapis.com/token answered 200 without a usable access_token")))
        #expect(read(200, #"{"access_token":"a b"}"#) == .failure(FCMAccessTokenError(code: .unavailable, "the token endpoint https://oauth2.googleapis.com/token answered 200 without a usable access_token")))
    }

    @Test("400 invalid_grant and 401 are refusals naming the account and what the endpoint said")
    func refused() {
        #expect(read(400, #"{"error":"invalid_grant","error_description":"Invalid JWT Signature."}"#) == .failure(FCMAccessTokenError(code: .refused,
            "the token endpoint https://oauth2.googleapis.com/token refused the service account sender@p.iam.gserviceaccount.com (HTTP 400 invalid_grant: Invalid JWT Signature.)")))
        #expect(read(401, #"{"error":"invalid_client"}"#) == .failure(FCMAccessTokenError(code: .refused,
            "the token endpoint https://oauth2.googleapis.com/token refused the service account sender@p.iam.gserviceaccount.com (HTTP 401 invalid_client)")))
    }

    @Test("400 invalid_grant about the assertion's iat and exp is a refusal of its time, which the clock may correct")
    func outOfTimeframe() {
        let description = "Invalid JWT: Token must be a short-lived token (60 minutes) and in a reasonable timeframe. Check your iat and exp values in the JWT claim."
        #expect(read(400, #"{"error":"invalid_grant","error_description":"\#(description)"}"#) == .outOfTimeframe(FCMAccessTokenError(code: .refused,
            "the token endpoint https://oauth2.googleapis.com/token refused the service account sender@p.iam.gserviceaccount.com (HTTP 400 invalid_grant: \(description))")))
        if case .outOfTimeframe = read(401, #"{"error":"invalid_grant","error_description":"\#(description)"}"#) { Issue.record("only a 400 is Google's answer") }
    }

    @Test("5xx is the endpoint's trouble: try later")
    func unavailable() {
        #expect(read(503, "busy") == .failure(FCMAccessTokenError(code: .unavailable, "the token endpoint https://oauth2.googleapis.com/token answered HTTP 503")))
    }
}
