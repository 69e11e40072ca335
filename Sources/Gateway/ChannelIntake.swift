import APNsCore
import Foundation
import PlatformCatalog
import PushCore

/// `POST /v1/channels/APP` and `DELETE /v1/channels/APP/ID` as channel-operation jobs: the gateway
/// holds no APNs credentials, so it publishes the operation and a worker carries it out, answering
/// with `channel.created`, `channel.deleted` or `channel.failed` (README "Live Activities").
struct ChannelIntake: Sendable {
    /// The operation's job id, as the gateway makes them for jobs.
    static func newID() -> String { UUID().uuidString.lowercased() }

    /// The fields a create's body may give.
    static let createFields: Set<String> = ["storage_policy", "label", "ends_at"]

    /// The job for a create: the body (a JSON object, or empty) gives the channel's settings.
    static func create(app: String, body: [UInt8], id: String) throws(GatewayAnswer) -> [UInt8] {
        var members: [String: JSONValue] = [:]
        if !body.allSatisfy({ $0 == 0x20 || $0 == 0x0A || $0 == 0x0D || $0 == 0x09 }) {
            guard case let .object(given)? = try? JSONValue.parse(body) else {
                throw GatewayAnswer.error(400, "the body must be a JSON object with storage_policy, label and ends_at, or empty")
            }
            if let unknown = given.keys.filter({ !createFields.contains($0) }).min() {
                throw GatewayAnswer.error(400, "unknown field (known: ends_at, label, storage_policy)", field: String(unknown.prefix(64)))
            }
            members = given
        }
        members["id"] = .string(id)
        members["app"] = .string(app)
        members["channel_op"] = .string("create")
        return try checked(JSONValue.object(members).encoded)
    }

    /// The job for a delete. `channel` is the path's last segment, percent-decoded (a channel id's
    /// base64 may hold `/`, written `%2F` in a URL).
    static func delete(app: String, channel encoded: String, id: String) throws(GatewayAnswer) -> [UInt8] {
        guard let channel = encoded.removingPercentEncoding, APNsChannelID.isValid(channel) else {
            throw GatewayAnswer.error(400, "not a channel id (base64 as channel.created named it; / written %2F)", field: "channel")
        }
        let members: [String: JSONValue] = ["id": .string(id), "app": .string(app), "channel_op": .string("delete"), "channel": .string(channel)]
        return try checked(JSONValue.object(members).encoded)
    }

    /// Read as the worker will, so that an accepted operation is never dead-lettered for its content.
    private static func checked(_ job: [UInt8]) throws(GatewayAnswer) -> [UInt8] {
        do {
            _ = try ChannelOperation(job, messageID: nil, makeID: { "" }, isChannelID: APNsChannelID.isValid)
        } catch {
            throw GatewayAnswer.error(400, error.problem, field: error.field)
        }
        return job
    }
}
