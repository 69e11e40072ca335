import PushCore
import Redis
import PlatformCatalog

/// Group membership over HTTP: the same sets `pushworker groups` and applications' own SADD use
/// (`<prefix><app>:<group>`), each device checked by the app's platform rules first.
struct GroupIntake: Sendable {
    let redis: RedisClient
    let apps: [String: Platform]
    let keyPrefix: String

    /// `{"tokens": [device, …]}`, each device as a job's `tokens` takes it.
    func devices(in body: [UInt8], app: String) throws(GatewayAnswer) -> [DeviceToken] {
        guard let platform = apps[app] else {
            throw GatewayAnswer.error(404, "unknown app \"\(app)\" (this gateway knows: \(apps.keys.sorted().joined(separator: ", ")))")
        }
        var parser = JSONParser(body)
        let document: JSONParser.TopLevel
        do { document = try parser.parseTopLevel() } catch {
            throw GatewayAnswer.error(400, "the body is not valid JSON (\(error.problem) at byte \(error.offset))")
        }
        guard case let .members(members) = document else {
            throw GatewayAnswer.error(400, "the body must be a JSON object: {\"tokens\": [...]}")
        }
        var tokens: [JSONValue]?
        for (name, value) in members {
            guard name == "tokens" else { throw GatewayAnswer.error(400, "unknown field (the body takes only tokens)", field: name) }
            guard case let .array(items) = value else { throw GatewayAnswer.error(400, "must be an array of devices", field: "tokens") }
            tokens = items
        }
        guard let tokens, !tokens.isEmpty else { throw GatewayAnswer.error(400, "missing or empty: give at least one device", field: "tokens") }
        guard tokens.count <= 10_000 else { throw GatewayAnswer.error(400, "at most 10000 devices a request", field: "tokens") }
        let rules = platform.jobRules
        var devices = [DeviceToken]()
        devices.reserveCapacity(tokens.count)
        for (index, value) in tokens.enumerated() {
            do throws(DeviceProblem) {
                // A subscription object's `given` is its compact form: a group member is a string.
                devices.append(try rules.device(from: value))
            } catch {
                throw GatewayAnswer.error(400, error.problem, field: "tokens[\(index)]" + (error.member.map { ".\($0)" } ?? ""))
            }
        }
        return devices
    }

    func key(app: String, group: String) throws(GatewayAnswer) -> String {
        guard JobParser.isName(group), group.utf8.count <= JobParser.maxGroupNameLength else {
            throw GatewayAnswer.error(400, "not a group name: 1–\(JobParser.maxGroupNameLength) characters of A–Z, a–z, 0–9, '.', '_' or '-'", field: "group")
        }
        return "\(keyPrefix)\(app):\(group)"
    }

    func add(_ devices: [DeviceToken], to key: String) async throws(GatewayAnswer) -> Int {
        do { return try await redis.setAdd(key: key, members: devices.map(\.given)) } catch {
            throw GatewayAnswer.error(503, "Redis did not take the change (\(error.message)); nothing was added, retry")
        }
    }

    func remove(_ devices: [DeviceToken], from key: String, platform: Platform) async throws(GatewayAnswer) -> Int {
        var seen = Set<String>()
        // An APNs token may have been stored in another spelling (uppercase, Base64): remove both.
        let spellings = devices.flatMap { platform == .apns ? [$0.given, $0.identity] : [$0.given] }.filter { seen.insert($0).inserted }
        do { return try await redis.setRemove(key: key, members: spellings) } catch {
            throw GatewayAnswer.error(503, "Redis did not take the change (\(error.message)); nothing was removed, retry")
        }
    }
}
