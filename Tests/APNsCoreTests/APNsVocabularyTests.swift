import Testing
@testable import APNsCore
import PushCore

/// Apple, "Handling notification responses from APNs": the :status APNs pairs with each reason, and the action the table gives it.
/// Actions: OK→sent, DROP→permanentFailure, TOKEN→tokenInvalid, RETRY/NEWCONN→retryable,
/// AUTH→credentialsProblem, REFRESH (ExpiredProviderToken: regenerate the JWT, retry once)→refreshCredentials.
private let responseTable: [String: (status: Int, action: String)] = [
    "BadCollapseId": (400, "DROP"),
    "BadDeviceToken": (400, "TOKEN"),
    "BadExpirationDate": (400, "DROP"),
    "BadMessageId": (400, "DROP"),
    "BadPriority": (400, "DROP"),
    "BadTopic": (400, "DROP"),
    "DeviceTokenNotForTopic": (400, "TOKEN"),
    "DuplicateHeaders": (400, "DROP"),
    "IdleTimeout": (400, "NEWCONN"),
    "InvalidPushType": (400, "DROP"),
    "MissingDeviceToken": (400, "DROP"),
    "MissingTopic": (400, "DROP"),
    "PayloadEmpty": (400, "DROP"),
    "TopicDisallowed": (400, "AUTH/DROP"),
    "BadCertificate": (403, "AUTH"),
    "BadCertificateEnvironment": (403, "AUTH"),
    "ExpiredProviderToken": (403, "REFRESH"),
    "Forbidden": (403, "AUTH"),
    "InvalidProviderToken": (403, "AUTH"),
    "MissingProviderToken": (403, "AUTH"),
    "UnrelatedKeyIdInToken": (403, "NEWCONN"),
    "BadEnvironmentKeyIdInToken": (403, "AUTH"),
    "BadEnvironmentKeyInToken": (403, "AUTH"),
    "BadPath": (404, "DROP"),
    "MethodNotAllowed": (405, "DROP"),
    "ExpiredToken": (410, "TOKEN"),
    "Unregistered": (410, "TOKEN"),
    "PayloadTooLarge": (413, "DROP"),
    "TooManyProviderTokenUpdates": (429, "NEWCONN"),
    "TooManyRequests": (429, "RETRY"),
    "InternalServerError": (500, "RETRY"),
    "ServiceUnavailable": (503, "RETRY"),
    "Shutdown": (503, "RETRY"),
    // Apple's broadcast error page names these without statuses (the statuses are the worker's
    // reading: not found, forbidden, bad request); a broadcast's channel is never a device token.
    "MissingChannelId": (400, "DROP"),
    "BadChannelId": (400, "DROP"),
    "ChannelNotRegistered": (404, "DROP"),
    "CannotCreateChannelConfig": (400, "DROP"),
    "FeatureNotEnabled": (403, "AUTH"),
]

private func outcomes(forAction action: String, reason: String) -> [DeliveryOutcome] {
    switch action {
    case "DROP": [.permanentFailure(reason: reason)]
    case "TOKEN": [.tokenInvalid(reason: reason)]
    case "RETRY", "NEWCONN": [.retryable(reason: reason)]
    case "AUTH": [.credentialsProblem(reason: reason)]
    case "AUTH/DROP": [.credentialsProblem(reason: reason), .permanentFailure(reason: reason)]
    case "REFRESH": [.refreshCredentials(reason: reason)]
    default: []
    }
}

@Suite("APNsReason and DeliveryOutcome (Apple: handling notification responses)")
struct DeliveryOutcomeTests {
    @Test("the enum lists exactly the reasons of the table")
    func reasonsMatchTable() {
        #expect(Set(APNsReason.allCases.map(\.rawValue)) == Set(responseTable.keys))
    }

    @Test("each reason's status and outcome follow the table", arguments: APNsReason.allCases)
    func outcome(_ reason: APNsReason) throws {
        let row = try #require(responseTable[reason.rawValue])
        #expect(reason.status == row.status)
        let outcome = DeliveryOutcome(apnsStatus: row.status, reason: reason.rawValue)
        #expect(outcomes(forAction: row.action, reason: reason.rawValue).contains(outcome), "\(row.action) → \(outcome)")
    }

    @Test("200 is sent, whatever the body says", arguments: [nil, "Unregistered", "anything"] as [String?])
    func accepted(_ reason: String?) {
        #expect(DeliveryOutcome(apnsStatus: 200, reason: reason) == .sent)
    }

    @Test("an unknown reason falls back on the status class", arguments: [
        (410, "tokenInvalid"), (403, "credentialsProblem"), (429, "retryable"), (500, "retryable"),
        (502, "retryable"), (503, "retryable"), (504, "retryable"), (599, "retryable"),
        (400, "permanentFailure"), (404, "permanentFailure"), (413, "permanentFailure"), (418, "permanentFailure"),
    ])
    func unknownReason(_ status: Int, _ kind: String) {
        let reason = "BrandNewReason2027"
        let expected: DeliveryOutcome = switch kind {
        case "tokenInvalid": .tokenInvalid(reason: reason)
        case "credentialsProblem": .credentialsProblem(reason: reason)
        case "retryable": .retryable(reason: reason)
        default: .permanentFailure(reason: reason)
        }
        #expect(DeliveryOutcome(apnsStatus: status, reason: reason) == expected)
    }

    @Test("no reason: the status class decides and the reason reads \"HTTP <status>\"")
    func nilReason() {
        #expect(DeliveryOutcome(apnsStatus: 410, reason: nil) == .tokenInvalid(reason: "HTTP 410"))
        #expect(DeliveryOutcome(apnsStatus: 403, reason: nil) == .credentialsProblem(reason: "HTTP 403"))
        #expect(DeliveryOutcome(apnsStatus: 429, reason: nil) == .retryable(reason: "HTTP 429"))
        #expect(DeliveryOutcome(apnsStatus: 503, reason: nil) == .retryable(reason: "HTTP 503"))
        #expect(DeliveryOutcome(apnsStatus: 400, reason: nil) == .permanentFailure(reason: "HTTP 400"))
    }

    @Test("a known reason wins over an unusual status")
    func knownReasonWins() {
        #expect(DeliveryOutcome(apnsStatus: 400, reason: "Unregistered") == .tokenInvalid(reason: "Unregistered"))
        #expect(DeliveryOutcome(apnsStatus: 500, reason: "BadTopic") == .permanentFailure(reason: "BadTopic"))
    }

    @Test("a reason the list does not know is kept as .unknown with its text, and has no status of its own")
    func unknownReasonKeepsItsText() {
        let reason = APNsReason(rawValue: "BrandNewReason2027")
        #expect(reason == .unknown("BrandNewReason2027"))
        #expect(reason.rawValue == "BrandNewReason2027")
        #expect(reason.status == nil)
        #expect(!APNsReason.allCases.contains(reason))
        #expect(APNsReason(rawValue: "Unregistered") == .unregistered, "a known text is never .unknown")
    }

    @Test("reason matching is exact (case-sensitive): a miscased reason falls back on the status")
    func caseSensitive() {
        #expect(DeliveryOutcome(apnsStatus: 403, reason: "expiredprovidertoken") == .credentialsProblem(reason: "expiredprovidertoken"))
    }
}

/// Apple, "Sending notification requests to APNs" (apns-push-type).
private let topicSuffixes: [APNsPushType: String?] = [
    .alert: nil, .background: nil, .mdm: nil,
    .location: ".location-query", .voip: ".voip", .complication: ".complication",
    .fileprovider: ".pushkit.fileprovider", .liveactivity: ".push-type.liveactivity",
    .pushtotalk: ".voip-ptt", .widgets: ".push-type.widgets",
    .controls: ".push-type.controls",   // §9.1
]

@Suite("APNsPushType (Apple: apns-push-type)")
struct APNsPushTypeTests {
    @Test("raw values are the apns-push-type header values")
    func rawValues() {
        #expect(APNsPushType.allCases.map(\.rawValue) == [
            "alert", "background", "location", "voip", "complication", "fileprovider", "mdm", "liveactivity",
            "pushtotalk", "widgets", "controls",
        ])
    }

    @Test("topic suffix, topic and bundle ID", arguments: APNsPushType.allCases)
    func topic(_ type: APNsPushType) throws {
        let suffix = try #require(topicSuffixes[type])
        #expect(type.topicSuffix == suffix)
        let bundle = "com.example.app"
        let topic = type.topic(forBundleID: bundle)
        #expect(topic == bundle + (suffix ?? ""))
        #expect(type.topic(forBundleID: topic) == topic, "no double suffix")
        #expect(type.bundleID(fromTopic: topic) == bundle)
        #expect(type.bundleID(fromTopic: bundle) == bundle, "a topic without the suffix is already a bundle ID")
    }

    @Test("payload limits: 5120 bytes for voip, 4096 for the rest", arguments: APNsPushType.allCases)
    func payloadLimit(_ type: APNsPushType) {
        #expect(type.maxPayloadBytes == (type == .voip ? 5120 : 4096))
    }

    @Test("suffix matching is on the whole suffix, not a prefix of it")
    func partialSuffix() {
        #expect(APNsPushType.voip.topic(forBundleID: "com.example.voipapp") == "com.example.voipapp.voip")
        #expect(APNsPushType.pushtotalk.topic(forBundleID: "com.example.app.voip") == "com.example.app.voip.voip-ptt")
        #expect(APNsPushType.liveactivity.bundleID(fromTopic: "com.example.app.liveactivity") == "com.example.app.liveactivity")
    }
}

@Suite("A job's APNs fields")
struct APNsJobOptionsTests {
    @Test("jobs differing only in their APNs fields are different jobs, and hash apart")
    func optionsTakePartInEquality() {
        let token = try! DeviceToken(validating: String(repeating: "ab", count: 32))
        let alert = PushJob(id: "j", tokens: [token], pushType: .alert, payload: Array("{}".utf8))
        var voip = alert
        voip.options = APNsJobOptions(pushType: .voip)
        #expect(alert != voip)
        #expect(alert == PushJob(id: "j", tokens: [token], pushType: .alert, payload: Array("{}".utf8)))
        #expect(Set([alert, voip, alert]).count == 2)
        #expect(voip.apns.pushType == .voip && voip.apns.priority == 10)
    }

    @Test("the APNs fields are written back under their job field names")
    func optionsAreWrittenBack() throws {
        var writer = JSONWriter()
        APNsJobOptions(pushType: .background, priority: 5, collapseID: "c", topic: "com.example.app").write(into: &writer)
        let text = String(decoding: writer.finish(), as: UTF8.self)
        #expect(text == #"{"push_type":"background","priority":5,"collapse_id":"c","topic":"com.example.app"}"#)
    }
}
