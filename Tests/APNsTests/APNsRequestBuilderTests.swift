@testable import HTTP2
import APNsCore
import PushCore
import PushTransport
import Testing
@testable import APNs
import HTTP2Transport

@Suite struct APNsRequestBuilderTests {
    let token = DeviceToken(trustedHex: String(repeating: "ab", count: 32))

    func headers(_ request: HTTP2Request) -> [String: String] {
        Dictionary(request.headers.map { ($0.name, $0.value) }, uniquingKeysWith: { first, _ in first })
    }

    @Test func alertRequestCarriesEveryHeader() throws {
        let builder = APNsRequestBuilder(defaultTopic: "com.example.app")
        let notification = APNsNotification(token: token, topic: nil, pushType: .alert, priority: 5, expiration: 1_800_000_000,
                                            collapseID: "score", apnsID: "123e4567-e89b-12d3-a456-426614174000", payload: Array(#"{"aps":{}}"#.utf8))
        let request = try builder.request(for: notification, authorization: "bearer x.y.z")
        #expect(request.method == "POST")
        #expect(request.path == "/3/device/" + token.identity)
        let values = headers(request)
        #expect(values["authorization"] == "bearer x.y.z")
        #expect(values["apns-push-type"] == "alert")
        #expect(values["apns-topic"] == "com.example.app")
        #expect(values["apns-priority"] == "5")
        #expect(values["apns-expiration"] == "1800000000")
        #expect(values["apns-collapse-id"] == "score")
        #expect(values["apns-id"] == "123e4567-e89b-12d3-a456-426614174000")
        #expect(request.headers.first { $0.name == "apns-id" }?.neverIndex == true)
        #expect(request.headers.first { $0.name == "authorization" }?.neverIndex == false)
        #expect(request.body == Array(#"{"aps":{}}"#.utf8))
        #expect(Set(request.headers.map(\.name)).count == request.headers.count)   // no duplicated header
    }

    @Test(arguments: [
        (APNsPushType.voip, "com.example.app.voip"), (.complication, "com.example.app.complication"),
        (.liveactivity, "com.example.app.push-type.liveactivity"), (.location, "com.example.app.location-query"),
        (.pushtotalk, "com.example.app.voip-ptt"), (.fileprovider, "com.example.app.pushkit.fileprovider"),
        (.widgets, "com.example.app.push-type.widgets"), (.background, "com.example.app"),
    ])
    func topicSuffixFollowsPushType(type: APNsPushType, topic: String) throws {
        let builder = APNsRequestBuilder(defaultTopic: "com.example.app")
        let request = try builder.request(for: APNsNotification(token: token, topic: nil, pushType: type, priority: 5, expiration: 0, payload: [0x7b, 0x7d]), authorization: nil)
        #expect(headers(request)["apns-topic"] == topic)
        #expect(headers(request)["apns-push-type"] == type.rawValue)
        #expect(headers(request)["authorization"] == nil)
        // A job that already wrote the suffix does not get it twice.
        let again = try builder.request(for: APNsNotification(token: token, topic: topic, pushType: type, priority: 5, expiration: 0, payload: [0x7b, 0x7d]), authorization: nil)
        #expect(headers(again)["apns-topic"] == topic)
    }

    @Test func refusesWhatAPNsWouldRefuse() {
        let builder = APNsRequestBuilder(defaultTopic: nil)
        let noTopic = APNsNotification(token: token, topic: nil, pushType: .alert, priority: 10, expiration: 0, payload: [0x7b, 0x7d])
        #expect { try builder.request(for: noTopic, authorization: nil) } throws: { ($0 as? APNsRequestProblem)?.reason == "MissingTopic" }
        let big = APNsNotification(token: token, topic: "t", pushType: .alert, priority: 10, expiration: 0, payload: Array(repeating: 0x20, count: 4097))
        #expect { try builder.request(for: big, authorization: nil) } throws: { ($0 as? APNsRequestProblem)?.reason == "PayloadTooLarge" }
        let voip = APNsNotification(token: token, topic: "t", pushType: .voip, priority: 10, expiration: 0, payload: Array(repeating: 0x20, count: 5120))
        #expect(throws: Never.self) { try builder.request(for: voip, authorization: nil) }
    }

    @Test func responsesMapToOutcomes() {
        let gone = APNsClient.result(from: HTTP2Response(status: 410, headers: [HTTP2Header(name: "apns-id", value: "abc")], body: Array(#"{"reason":"Unregistered","timestamp":1700000000123}"#.utf8)))
        #expect(gone.outcome == .tokenInvalid(reason: "Unregistered"))
        #expect(gone.timestamp == 1_700_000_000_123)
        #expect(gone.requestID == "abc")
        let ok = APNsClient.result(from: HTTP2Response(status: 200, headers: [], body: []))
        #expect(ok.outcome == .sent)
        let unavailable = APNsClient.result(from: HTTP2Response(status: 503, headers: [], body: Array(#"{"reason":"ServiceUnavailable"}"#.utf8)))
        #expect(unavailable.outcome == .retryable(reason: "ServiceUnavailable"))
        let garbage = APNsClient.result(from: HTTP2Response(status: 502, headers: [], body: Array("<html>".utf8)))
        #expect(garbage.outcome == .retryable(reason: "HTTP 502"))
    }

    @Test func transportFailuresMapToRetryOrPause() {
        let lost = PushResult(transportError: HTTP2Error(code: .connectionLost, message: "reset"))
        #expect(lost.outcome == .retryable(reason: "ConnectionLost: reset"))
        #expect(lost.status == 0)
        let timeout = PushResult(transportError: HTTP2Error(code: .timeout, message: "30 s"))
        #expect(timeout.outcome == .retryable(reason: "Timeout: 30 s"))
        // A certificate APNs refuses (or a server we cannot verify) is not the device's fault.
        let tls = PushResult(transportError: HTTP2Error(code: .tlsFailed, message: "certificate expired"))
        #expect(tls.outcome == .credentialsProblem(reason: "TLSFailed: certificate expired"))
    }
}

@Suite struct APNsHeaderCacheTests {
    let token = DeviceToken(trustedHex: String(repeating: "ab", count: 32))

    func notification(priority: Int = 10, apnsID: String? = nil) -> APNsNotification {
        APNsNotification(token: token, topic: "com.example.app", pushType: .alert, priority: priority, expiration: 0,
                         apnsID: apnsID, payload: Array(#"{"aps":{}}"#.utf8))
    }

    @Test func sameKindOfNotificationBuildsItsHeadersOnce() throws {
        let cache = APNsHeaderCache()
        var builds = 0
        func build() throws(APNsRequestProblem) -> RequestHeaderBlock {
            builds += 1
            return RequestHeaderBlock(method: "POST", authority: "a", headers: [HTTP2Header(name: "apns-priority", value: "\(builds)")])
        }
        let first = try cache.block(for: notification(), authorization: "bearer 1", build: build)
        let again = try cache.block(for: notification(), authorization: "bearer 1", build: build)
        #expect(builds == 1)
        #expect(first.textFields(path: "/").map { $0.value } == again.textFields(path: "/").map { $0.value })
        _ = try cache.block(for: notification(), authorization: "bearer 2", build: build)
        _ = try cache.block(for: notification(priority: 5), authorization: "bearer 2", build: build)
        #expect(builds == 3, "a new JWT or another priority is another header block")
        _ = try cache.block(for: notification(apnsID: "x"), authorization: "bearer 2", build: build)
        _ = try cache.block(for: notification(apnsID: "y"), authorization: "bearer 2", build: build)
        #expect(builds == 3, "the apns-id is sent per request, outside the shared block: it does not split the cache")
        for (_, change) in Self.headerFieldChanges {
            var other = notification()
            change(&other.headerFields)
            _ = try cache.block(for: other, authorization: "bearer 2", build: build)
        }
        _ = try cache.block(for: notification(), authorization: nil, build: build)
        #expect(builds == 8, "topic, collapse id, push type, expiration and authorization each split the cache")
        for priority in 0..<APNsHeaderCache.capacity {
            _ = try cache.block(for: notification(priority: 100 + priority), authorization: "bearer 2", build: build)
        }
        _ = try cache.block(for: notification(), authorization: "bearer 1", build: build)
        #expect(builds == 8 + APNsHeaderCache.capacity + 1, "the oldest entry made room")
    }

    /// One change to each header field but priority (the test above varies that one itself).
    static let headerFieldChanges: [(field: String, change: @Sendable (inout APNsNotification.HeaderFields) -> Void)] = [
        ("topic", { $0.topic = "com.example.other" }),
        ("collapseID", { $0.collapseID = "c" }),
        ("pushType", { $0.pushType = .background }),
        ("expiration", { $0.expiration = 60 }),
    ]

    /// A new field of the notification must be placed: in `HeaderFields` if it changes a header
    /// (then the cache keys on it), outside if it is sent per request.
    @Test func everyFieldThatChangesTheHeadersSplitsTheCache() throws {
        let perRequest = Mirror(reflecting: notification()).children.compactMap(\.label).filter { $0 != "headerFields" }
        #expect(perRequest.sorted() == ["apnsID", "payload", "token"], "a new field: add it to HeaderFields or to this list")

        let builder = APNsRequestBuilder(defaultTopic: nil)
        let base = notification()
        let baseHeaders = try builder.sharedHeaders(for: base.headerFields, authorization: "bearer 1")
        var changes = Self.headerFieldChanges
        changes.append(("priority", { $0.priority = 5 }))
        var covered: Set<String> = []
        for (field, change) in changes {
            var other = base
            change(&other.headerFields)
            let changed = Self.differingFields(base.headerFields, other.headerFields)
            #expect(changed == [field])
            covered.formUnion(changed)
            let otherHeaders = try builder.sharedHeaders(for: other.headerFields, authorization: "bearer 1")
            #expect(otherHeaders.map { [$0.name, $0.value] } != baseHeaders.map { [$0.name, $0.value] },
                    "\(field) changes a header")

            #expect(try Self.blocksBuilt(for: [base, other, other]) == 2, "\(field) splits the cache")
        }
        let all = Set(Mirror(reflecting: base.headerFields).children.compactMap(\.label))
        #expect(covered == all, "every header field is changed once above")

        var perRequestOnly = base
        perRequestOnly.token = DeviceToken(trustedHex: String(repeating: "cd", count: 32))
        perRequestOnly.apnsID = "x"
        perRequestOnly.payload = Array(#"{"aps":{"badge":1}}"#.utf8)
        #expect(try Self.blocksBuilt(for: [base, perRequestOnly]) == 1, "device, apns-id and payload are sent per request: one block for both")
    }

    /// How many header blocks one cache builds for these notifications, sent in order.
    static func blocksBuilt(for notifications: [APNsNotification]) throws -> Int {
        let cache = APNsHeaderCache()
        var builds = 0
        func build() throws(APNsRequestProblem) -> RequestHeaderBlock {
            builds += 1
            return RequestHeaderBlock(method: "POST", authority: "a", headers: [])
        }
        for notification in notifications { _ = try cache.block(for: notification, authorization: "bearer 1", build: build) }
        return builds
    }

    /// The labels of the fields whose values differ.
    static func differingFields(_ lhs: APNsNotification.HeaderFields, _ rhs: APNsNotification.HeaderFields) -> Set<String> {
        var differing: Set<String> = []
        for (left, right) in zip(Mirror(reflecting: lhs).children, Mirror(reflecting: rhs).children)
        where String(describing: left.value) != String(describing: right.value) {
            differing.insert(left.label ?? "?")
        }
        return differing
    }

    @Test func payloadLimitHoldsWhenTheHeadersAreCached() async throws {
        // Port 9 on loopback refuses: the first send fails to connect, which is fine here.
        var configuration = APNsConfiguration(url: "https://127.0.0.1:9", credentials: .certificate(.pem(certificateFile: "/nonexistent.pem", privateKeyFile: "/nonexistent.key")),
                                              topic: "com.example.app")
        configuration.connectTimeout = .seconds(2)
        let client = try APNsClient(configuration: configuration, logger: .init(label: "test"))
        var small = notification()
        _ = await client.send(small)
        small.payload = Array(repeating: UInt8(ascii: " "), count: APNsPushType.alert.maxPayloadBytes + 1)
        let tooLarge = await client.send(small)
        #expect(tooLarge.reason == "PayloadTooLarge")
        await client.shutdown()
    }
}

@Suite("APNs outcomes of transport failures")
struct APNsTransportOutcomeTests {
    @Test func whatAPNsNeverSawIsUnavailableNotRetryable() {
        for kind in [HTTP2Error.Code.connectFailed, .refused, .unsent] {
            let result = PushResult(transportError: HTTP2Error(code: kind, message: "x"))
            guard case .unavailable = result.outcome else {
                Issue.record("\(kind) gave \(result.outcome)")
                continue
            }
        }
        for kind in [HTTP2Error.Code.timeout, .connectionLost] {
            let result = PushResult(transportError: HTTP2Error(code: kind, message: "x"))
            guard case .retryable = result.outcome else {
                Issue.record("\(kind) gave \(result.outcome)")
                continue
            }
        }
        guard case .credentialsProblem = PushResult(transportError: HTTP2Error(code: .tlsFailed, message: "x")).outcome else {
            Issue.record("a TLS failure is a credentials problem")
            return
        }
    }
}

@Suite("APNsCertificateTopic")
struct APNsCertificateTopicTests {
    let push = CertificateSummary(bundleID: "com.example.app", commonName: nil,
                                  topics: ["com.example.app", "com.example.app.voip"], validUntil: "")

    @Test func withoutATopicTheCertificatesBundleIDIsUsed() throws {
        #expect(try APNsCertificateTopic.resolve(given: nil, certificate: push) == "com.example.app")
    }

    @Test func aTopicTheCertificateCoversIsKept() throws {
        #expect(try APNsCertificateTopic.resolve(given: "com.example.app", certificate: push) == "com.example.app")
    }

    @Test func aTopicTheCertificateDoesNotCoverIsRefused() {
        let error = #expect(throws: APNsConfigurationError.self) { try APNsCertificateTopic.resolve(given: "com.other.app", certificate: push) }
        #expect(error?.message.contains("com.other.app is not among the certificate's topics (com.example.app, com.example.app.voip)") == true)
    }

    @Test func noTopicAndNoBundleIDIsRefused() throws {
        let anonymous = CertificateSummary(bundleID: nil, commonName: "x", topics: [], validUntil: "")
        #expect(throws: APNsConfigurationError.self) { try APNsCertificateTopic.resolve(given: nil, certificate: anonymous) }
        #expect(try APNsCertificateTopic.resolve(given: "any.topic", certificate: anonymous) == "any.topic",
                "a certificate that lists no topics cannot be checked")
    }
}

@Suite struct APNsEndpointTests {
    static func configuration(url: String?) -> APNsConfiguration {
        APNsConfiguration(environment: .development, url: url, credentials: .certificate(.pem(certificateFile: "c", privateKeyFile: "k")), topic: "t")
    }

    @Test func anOverrideURLGivesHostAndPort() throws {
        #expect(try Self.configuration(url: "https://127.0.0.1:2197").endpoint() == ("127.0.0.1", 2197))
        #expect(try Self.configuration(url: "https://[::1]/").endpoint() == ("::1", 443))
        #expect(try Self.configuration(url: nil).endpoint() == ("api.sandbox.push.apple.com", 443))
    }

    @Test(arguments: ["http://127.0.0.1:2197", "https://", "https://h:0"])
    func aBadOverrideURLIsNamed(url: String) {
        #expect { try Self.configuration(url: url).endpoint() } throws: { "\($0)".contains("apns-url") }
    }
}
