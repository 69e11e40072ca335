import Testing
import WebPush

/// When refused VAPID tokens are the app's problem and when each subscription's: driven with
/// instants of the test's own, so every window edge is exact.
@Suite struct WebPushRefusalJudgeTests {
    static let start = ContinuousClock.now
    static func at(_ seconds: Double) -> ContinuousClock.Instant { start + .seconds(seconds) }
    static func origin(_ text: String) -> WebPushEndpointOrigin { try! WebPushEndpointOrigin(endpoint: text + "/x") }

    static let fcm = origin("https://fcm.googleapis.com")
    static let mozilla = origin("https://updates.push.services.mozilla.com")
    static let hostile = origin("https://push.hostile.example")

    /// One service that refuses everything, however many subscriptions point at it, is those
    /// subscriptions' trouble: never the app's.
    @Test func oneHostileOriginNeverBlamesTheApp() {
        var judge = WebPushRefusalJudge()
        for index in 0..<500 {
            #expect(judge.refused(Self.hostile, subscription: "https://push.hostile.example/\(index)", at: Self.at(Double(index) * 0.1))
                    == .subscription(confirmed: false))
        }
    }

    @Test func aRefusalWhereTheKeyWorksIsTheSubscriptions() {
        var judge = WebPushRefusalJudge()
        judge.accepted(Self.fcm, at: Self.at(0))
        #expect(judge.refused(Self.fcm, subscription: "a", at: Self.at(59)) == .subscription(confirmed: true))
        #expect(judge.refused(Self.fcm, subscription: "b", at: Self.at(59.5)) == .subscription(confirmed: true))
        #expect(judge.refused(Self.fcm, subscription: "c", at: Self.at(59.9)) == .subscription(confirmed: true), "FCM accepts the key")
        // A minute after the acceptance the refusals are evidence again.
        #expect(judge.refused(Self.fcm, subscription: "d", at: Self.at(60)) == .subscription(confirmed: false))
    }

    /// A trusted service refusing three different subscriptions and accepting none: the key.
    @Test func aTrustedServiceRefusingThreeSubscriptionsIsTheApps() {
        var judge = WebPushRefusalJudge()
        #expect(judge.refused(Self.fcm, subscription: "a", at: Self.at(0)) == .subscription(confirmed: false))
        #expect(judge.refused(Self.fcm, subscription: "a", at: Self.at(1)) == .subscription(confirmed: false), "the same one again counts once")
        #expect(judge.refused(Self.fcm, subscription: "b", at: Self.at(2)) == .subscription(confirmed: false))
        guard case let .app(evidence) = judge.refused(Self.fcm, subscription: "c", at: Self.at(3)) else {
            Issue.record("three subscriptions refused by FCM should blame the app")
            return
        }
        #expect(evidence == "fcm.googleapis.com refused 3 subscriptions in 60 s and accepted none")
        #expect(judge.refused(Self.fcm, subscription: "a", at: Self.at(4)) == .app(evidence: evidence), "held while the trip lasts")
        // Other services are judged on their own meanwhile.
        #expect(judge.refused(Self.hostile, subscription: "h", at: Self.at(5)) == .subscription(confirmed: false))
    }

    @Test func refusalsOlderThanTheWindowAreNoEvidence() {
        var judge = WebPushRefusalJudge()
        _ = judge.refused(Self.fcm, subscription: "a", at: Self.at(0))
        _ = judge.refused(Self.fcm, subscription: "b", at: Self.at(30))
        #expect(judge.refused(Self.fcm, subscription: "c", at: Self.at(60)) == .subscription(confirmed: false), "a is a minute old")
        guard case .app = judge.refused(Self.fcm, subscription: "d", at: Self.at(61)) else {
            Issue.record("b, c and d are within a minute")
            return
        }
    }

    /// An acceptance where the refusals came from shows the key works: the trip ends at once.
    @Test func anAcceptanceEndsTheTrip() {
        var judge = WebPushRefusalJudge()
        for (index, name) in ["a", "b", "c"].enumerated() { _ = judge.refused(Self.fcm, subscription: name, at: Self.at(Double(index))) }
        #expect(judge.refused(Self.fcm, subscription: "d", at: Self.at(5)) != .subscription(confirmed: false))
        judge.accepted(Self.fcm, at: Self.at(6))
        #expect(judge.refused(Self.fcm, subscription: "d", at: Self.at(7)) == .subscription(confirmed: true))
    }

    /// A trip lasts the window and spends its evidence: the devices it held come back to a judge
    /// that needs three fresh refusals, so a few subscriptions cannot keep the app paused.
    @Test func aTripEndsAfterTheWindowAndItsEvidenceIsSpent() {
        var judge = WebPushRefusalJudge()
        for (index, name) in ["a", "b", "c"].enumerated() { _ = judge.refused(Self.fcm, subscription: name, at: Self.at(Double(index))) }
        #expect(judge.refused(Self.fcm, subscription: "c", at: Self.at(61)) != .subscription(confirmed: false), "still within the trip")
        #expect(judge.refused(Self.fcm, subscription: "c", at: Self.at(62)) == .subscription(confirmed: false))
        #expect(judge.refused(Self.fcm, subscription: "a", at: Self.at(63)) == .subscription(confirmed: false))
        guard case .app = judge.refused(Self.fcm, subscription: "b", at: Self.at(64)) else {
            Issue.record("three fresh refusals from a trusted service blame the app again")
            return
        }
    }

    /// Three origins refusing while no origin accepts anything: the key (a wrong key is refused
    /// everywhere, whichever services the subscriptions are on).
    @Test func threeOriginsRefusingWhileNothingIsAcceptedIsTheApps() {
        var judge = WebPushRefusalJudge()
        #expect(judge.refused(Self.hostile, subscription: "a", at: Self.at(0)) == .subscription(confirmed: false))
        #expect(judge.refused(Self.origin("https://push.other.example"), subscription: "b", at: Self.at(1)) == .subscription(confirmed: false))
        guard case let .app(evidence) = judge.refused(Self.mozilla, subscription: "c", at: Self.at(2)) else {
            Issue.record("three origins refusing with nothing accepted should blame the app")
            return
        }
        #expect(evidence.hasPrefix("3 push services ("))
        #expect(evidence.hasSuffix("refused messages in 60 s and none accepted any"))
        #expect(judge.refused(Self.origin("https://push.fourth.example"), subscription: "d", at: Self.at(3)) == .app(evidence: evidence))
    }

    /// The same three origins while another origin accepts: the key works, so each refusal is
    /// its subscription's (a few hostile servers cannot pause a busy app).
    @Test func threeRefusingOriginsWhileAnotherAcceptsAreNotTheApps() {
        var judge = WebPushRefusalJudge()
        judge.accepted(Self.fcm, at: Self.at(0))
        for (index, host) in ["a", "b", "c", "d", "e"].enumerated() {
            #expect(judge.refused(Self.origin("https://\(host).hostile.example"), subscription: host, at: Self.at(Double(index + 1)))
                    == .subscription(confirmed: false))
        }
    }

    /// Microsoft's regional hosts are one service; a port makes another origin.
    @Test func serviceNamesMatchOrigins() throws {
        let windows = try #require(WebPushServiceName("*.notify.windows.com"))
        #expect(windows.matches(Self.origin("https://wns2-par02p.notify.windows.com")))
        #expect(!windows.matches(Self.origin("https://notify.windows.com.hostile.example")))
        #expect(!windows.matches(Self.origin("https://wns2-par02p.notify.windows.com:8443")))
        let local = try #require(WebPushServiceName("127.0.0.1:8443"))
        #expect(local.matches(Self.origin("https://127.0.0.1:8443")))
        #expect(!local.matches(Self.origin("https://127.0.0.1:8444")))
        #expect(WebPushServiceName("[::1]:8443")?.matches(Self.origin("https://[::1]:8443")) == true)
        for bad in ["", "*.", "host:0", "host:x", "a b"] { #expect(WebPushServiceName(bad) == nil, "\(bad)") }
        #expect(WebPushServiceName.wellKnown.map(\.description)
                == ["fcm.googleapis.com", "updates.push.services.mozilla.com", "web.push.apple.com", "*.notify.windows.com"])

        var judge = WebPushRefusalJudge()
        for (index, region) in ["a", "b", "c"].enumerated() {
            let verdict = judge.refused(Self.origin("https://wns2-\(region).notify.windows.com"), subscription: region, at: Self.at(Double(index)))
            #expect((index < 2) == (verdict == .subscription(confirmed: false)), "the third host's refusal completes the service's evidence")
        }
    }
}
