import APNsCore
@testable import Sandbox
import Testing

@Suite("Sandbox building blocks")
struct UnitTests {
    @Test(arguments: [
        #"{}"#, #" {"aps":{"alert":"hi","badge":1}} "#, #"{"a":[1,-2.5e3,true,false,null,"\u00e9\n"]}"#, #"{"a":{"b":{}}}"#,
    ])
    func jsonObjectsAreAccepted(_ text: String) {
        #expect(SandboxRequestValidator.isJSONObject(Array(text.utf8)))
    }

    @Test(arguments: [
        "", "[]", "\"x\"", "1", "{", #"{"a":}"#, #"{"a":1,}"#, #"{"a":01}"#, #"{a:1}"#, #"{"a":1}x"#, #"{"a":tru}"#,
        "{\"a\":\"\u{1}\"}", #"{"a":"\q"}"#,
    ])
    func everythingElseIsRejected(_ text: String) {
        #expect(!SandboxRequestValidator.isJSONObject(Array(text.utf8)))
    }

    @Test func generatedUUIDsAreCanonicalAndDistinct() {
        var generator = SandboxUUIDGenerator()
        let ids = (0..<1000).map { _ in generator.next() }
        #expect(Set(ids).count == ids.count)
        #expect(ids.allSatisfy(SandboxUUID.isCanonical))
        #expect(ids.allSatisfy { $0 == $0.lowercased() && $0.dropFirst(14).first == "4" })
        #expect(!SandboxUUID.isCanonical("0e3f8a9b1c2d4e5f8a9b0c1d2e3f4a5b"))
        #expect(!SandboxUUID.isCanonical("0e3f8a9b-1c2d-4e5f-8a9b-0c1d2e3f4a5"))
    }

    @Test func rulesCountTheirUsesAndResetClearsThem() {
        let recorder = SandboxRecorder(
            rules: [SandboxRule(tokenPrefix: "aa", status: 503, reason: "ServiceUnavailable", times: 2)],
            faults: SandboxFaults(), recordLimit: 3
        )
        var draft = SandboxDraft()
        draft.token = "aabb"
        let statuses = (1...4).map { number -> Int in
            guard case .answer(let status, _, _, _) = recorder.admit(draft, requestNumber: number, draining: false) else { return 0 }
            return status
        }
        #expect(statuses == [503, 503, 200, 200])
        #expect(recorder.received().count == 3)
        #expect(recorder.statistics().requests == 4)
        recorder.reset()
        #expect(recorder.received().isEmpty)
        guard case .answer(let status, _, _, _) = recorder.admit(draft, requestNumber: 5, draining: false) else {
            Issue.record("expected an answer")
            return
        }
        #expect(status == 503)
    }

    @Test func recordKeepsTheNewestInOrder() {
        var ring = NotificationRing(limit: 3)
        for index in 1...5 {
            ring.append(ReceivedNotification(
                token: "\(index)", topic: "", pushType: "", priority: 10, expiration: nil, collapseID: nil, apnsID: "",
                payload: [], authentication: "", status: 200, reason: nil, connectionID: 1, receivedAt: .now
            ))
        }
        #expect(ring.ordered.map(\.token) == ["3", "4", "5"])
    }

    @Test func certificateTopicsAcceptBundleAndPushTypeSuffixes() {
        #expect(SandboxRequestValidator.topic("com.example.app", belongsTo: "com.example.app"))
        #expect(SandboxRequestValidator.topic("com.example.app.voip", belongsTo: "com.example.app"))
        #expect(SandboxRequestValidator.topic("com.example.app.push-type.liveactivity", belongsTo: "com.example.app"))
        #expect(!SandboxRequestValidator.topic("com.example.apps", belongsTo: "com.example.app"))
        #expect(!SandboxRequestValidator.topic("com.other.app", belongsTo: "com.example.app"))
    }
}
