import Foundation
@testable import Sandbox
import Testing

@Suite("Sandbox broadcast building blocks")
struct BroadcastUnitTests {
    @Test func generatedChannelIDsAreSixteenRandomBytesInPaddedBase64() {
        let ids = (0..<1000).map { _ in SandboxChannelID.generate() }
        #expect(Set(ids).count == ids.count)
        let decodedSizes = Set(ids.map { Data(base64Encoded: $0)?.count ?? 0 })
        #expect(decodedSizes == [16])
        let wellFormed = ids.filter(SandboxChannelID.isWellFormed)
        #expect(wellFormed.count == ids.count)
    }

    @Test(arguments: ["AAAAAAAAAAAAAAAAAAAAAA==", "dGVzdA==", "YWJj", "+/+/", "YQ=="])
    func wellFormedChannelIDs(_ id: String) {
        #expect(SandboxChannelID.isWellFormed(id))
    }

    @Test(arguments: ["", "YWJ", "YQ", "YQ===", "Y===", "YQ=a", "ab-_", "ab c", "YWJj\n", "é123"])
    func malformedChannelIDs(_ id: String) {
        #expect(!SandboxChannelID.isWellFormed(id))
    }

    @Test func channelsAreBoundedPerAppAndInApps() {
        let channels = SandboxChannels()
        var first = ""
        for index in 0..<SandboxChannels.maximumPerBundle {
            guard case .success(let id) = channels.create(bundleID: "com.example.app", storagePolicy: index % 2) else {
                Issue.record("create \(index) failed")
                return
            }
            if index == 0 { first = id }
        }
        #expect(channels.create(bundleID: "com.example.app", storagePolicy: 0) == .failure(.tooManyChannels))
        #expect(channels.storagePolicy(bundleID: "com.example.app", channelID: first) == 0)
        #expect(channels.storagePolicy(bundleID: "com.other.app", channelID: first) == nil)
        #expect(channels.delete(bundleID: "com.example.app", channelID: first))
        #expect(!channels.delete(bundleID: "com.example.app", channelID: first))
        let again = channels.create(bundleID: "com.example.app", storagePolicy: 1)
        #expect((try? again.get()) != nil)

        for index in 1..<SandboxChannels.maximumBundles {
            _ = channels.create(bundleID: "app.\(index)", storagePolicy: 0)
        }
        #expect(channels.create(bundleID: "one.too.many", storagePolicy: 0) == .failure(.tooManyBundleIDs))
        // An app that has channels can still get more, and one that loses its last frees its place.
        #expect((try? channels.create(bundleID: "app.1", storagePolicy: 0).get()) != nil)
        for id in channels.channels(bundleID: "app.2").keys {
            _ = channels.delete(bundleID: "app.2", channelID: id)
        }
        #expect((try? channels.create(bundleID: "one.too.many", storagePolicy: 0).get()) != nil)
    }

    @Test func rulesTellDevicePushesFromBroadcasts() {
        let device = (token: "abcd", topic: "com.example.app", channel: String?.none)
        let broadcast = (token: "", topic: "com.example.app", channel: Optional("Y2hhbm5lbA=="))
        let everything = SandboxRule(status: 503)
        #expect(everything.matches(token: device.token, topic: device.topic, channel: device.channel))
        #expect(everything.matches(token: broadcast.token, topic: broadcast.topic, channel: broadcast.channel))
        let byChannel = SandboxRule(channel: "Y2hhbm5lbA==", reason: .featureNotEnabled)
        #expect(byChannel.status == 403)
        #expect(!byChannel.matches(token: device.token, topic: device.topic, channel: device.channel))
        #expect(byChannel.matches(token: broadcast.token, topic: broadcast.topic, channel: broadcast.channel))
        #expect(!byChannel.matches(token: "", topic: broadcast.topic, channel: "b3RoZXI="))
        let byPrefix = SandboxRule(tokenPrefix: "", status: 410)
        #expect(byPrefix.matches(token: device.token, topic: device.topic, channel: device.channel))
        #expect(!byPrefix.matches(token: broadcast.token, topic: broadcast.topic, channel: broadcast.channel))
        let byTopic = SandboxRule(topic: "com.other.app", status: 403)
        #expect(!byTopic.matches(token: broadcast.token, topic: broadcast.topic, channel: broadcast.channel))
    }

    @Test func rulesDecodeTheirChannel() throws {
        let rules = try JSONDecoder().decode([SandboxRule].self, from: Data(#"""
            [{"channel":"Y2hhbm5lbA==","status":404,"reason":"ChannelNotRegistered"},{"tokenPrefix":"ab","status":410}]
            """#.utf8))
        #expect(rules == [
            SandboxRule(channel: "Y2hhbm5lbA==", reason: .channelNotRegistered),
            SandboxRule(tokenPrefix: "ab", status: 410),
        ])
    }

    @Test func pathsAreReadBySegment() {
        #expect(SandboxPath.segment(of: "/4/broadcasts/apps/com.example.app", after: "/4/broadcasts/apps/") == "com.example.app")
        #expect(SandboxPath.segment(of: "/4/broadcasts/apps/", after: "/4/broadcasts/apps/") == nil)
        #expect(SandboxPath.segment(of: "/4/broadcasts/apps/a/b", after: "/4/broadcasts/apps/") == nil)
        let both = SandboxPath.segments(of: "/1/apps/com.example.app/all-channels", after: "/1/apps/")
        #expect(both?.first == "com.example.app")
        #expect(both?.second == "all-channels")
        #expect(SandboxPath.segments(of: "/1/apps//channels", after: "/1/apps/") == nil)
        #expect(SandboxPath.segments(of: "/1/apps/com.example.app/", after: "/1/apps/") == nil)
        #expect(SandboxPath.segments(of: "/1/apps/com.example.app", after: "/1/apps/") == nil)
        #expect(SandboxPath.segments(of: "/2/apps/a/channels", after: "/1/apps/") == nil)
    }
}
