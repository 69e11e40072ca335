import APNsCore
@testable import PushCore
import Testing

/// A `channel_op` message: create (storage policy, label, end) or delete (the channel), each refused
/// naming the field where it breaks the contract.
@Suite struct ChannelOperationTests {
    static let channel = "dHN0LXNyY2gtY2hubA=="

    static func operation(_ json: String) throws(JobRejection) -> ChannelOperation {
        try ChannelOperation(Array(json.utf8), messageID: "m-1", makeID: { "made" }) { $0.hasSuffix("==") }
    }

    static func rejection(_ json: String) -> JobRejection? {
        do {
            _ = try operation(json)
            return nil
        } catch {
            return error
        }
    }

    @Test func aCreateTakesItsSettingsAndDefaults() throws {
        let full = try Self.operation(#"{"id":"c1","app":"scores","channel_op":"create","storage_policy":1,"label":"Final","ends_at":1767229200}"#)
        #expect(full.id == "c1" && full.app == "scores" && full.name == "create")
        #expect(full.kind == .create(storagePolicy: 1, label: "Final", endsAt: 1_767_229_200))
        let bare = try Self.operation(#"{"channel_op":"create"}"#)
        #expect(bare.id == "m-1" && bare.app == "default" && bare.kind == .create(storagePolicy: 0, label: nil, endsAt: nil))
    }

    @Test func aDeleteNamesItsChannel() throws {
        let delete = try Self.operation(#"{"app":"scores","channel_op":"delete","channel":"\#(Self.channel)"}"#)
        #expect(delete.kind == .delete(channel: Self.channel) && delete.name == "delete")
    }

    @Test(arguments: [
        (#"{"channel_op":"open"}"#, "channel_op"),
        (#"{"channel_op":42}"#, "channel_op"),
        (#"{"channel_op":"create","storage_policy":2}"#, "storage_policy"),
        (#"{"channel_op":"create","storage_policy":"1"}"#, "storage_policy"),
        (#"{"channel_op":"create","channel":"dHN0LXNyY2gtY2hubA=="}"#, "channel"),
        (#"{"channel_op":"create","ends_at":-5}"#, "ends_at"),
        (#"{"channel_op":"create","label":"a\u0001b"}"#, "label"),
        (#"{"channel_op":"delete"}"#, "channel"),
        (#"{"channel_op":"delete","channel":"not base64"}"#, "channel"),
        (#"{"channel_op":"delete","channel":"dHN0LXNyY2gtY2hubA==","label":"x"}"#, "label"),
        (#"{"channel_op":"create","tokens":["ab"]}"#, "tokens"),
        (#"{"channel_op":"create","app":"no spaces"}"#, "app"),
    ])
    func eachBrokenFieldIsNamed(_ json: String, _ field: String) {
        #expect(Self.rejection(json)?.field == field, "\(json)")
    }

    @Test func aPushJobParserRefusesChannelOpByName() {
        // How the worker tells a channel operation from a push job: the parser names the field.
        let body = Array(#"{"channel_op":"create","app":"default"}"#.utf8)
        do {
            _ = try parseJob(body)
            Issue.record("parsed as a push job")
        } catch {
            #expect(error.field == ChannelOperation.field)
        }
    }
}
