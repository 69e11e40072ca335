import Foundation
import NIOCore
import PushCore

/// `/_sandbox/…` requests: how tests, benchmarks and users' CI scripts look into a sandbox running
/// in another process and change its behaviour without a restart. They are answered before APNs
/// validation, need no authentication (the sandbox listens on loopback), and are not recorded.
///   GET  /_sandbox/stats      counters and first/last request times
///   GET  /_sandbox/received   every answered notification (token or broadcast channel_id, status, reason, provider token and team, …) as JSON lines;
///                             `?token_prefix=P`: only the tokens that start with P
///   POST /_sandbox/reset      clear the record and counters
///   PUT  /_sandbox/rules      body: a JSON array of rules, replacing the current ones
///   PUT  /_sandbox/faults     body: {"goAwayEveryRequests":N,"resetEveryRequests":N,"stallEveryRequests":N,"latencyMs":N}
/// Bad input is answered 400 with `{"error":…,"field":…}`: it runs on an event loop, so a value
/// that traps later (a latency that overflows) would take every connection down with it.
enum SandboxControl {
    static let prefix = "/_sandbox/"

    static func answer(method: String, path: String, body: ByteBuffer?, recorder: SandboxRecorder) -> (status: Int, json: String) {
        let bodyBytes = body.map { Array($0.readableBytesView) } ?? []
        let route = path.split(separator: "?", maxSplits: 1).first.map(String.init) ?? path
        let query = path.dropFirst(route.count + 1)
        switch (method, route) {
        case ("GET", "/_sandbox/stats"):
            let statistics = recorder.statistics()
            let fields: [(String, Int64)] = [
                ("connections_accepted", Int64(statistics.connectionsAccepted)), ("requests", Int64(statistics.requests)),
                ("accepted", Int64(statistics.accepted)), ("rejected", Int64(statistics.rejected)),
                ("goaways_sent", Int64(statistics.goAwaysSent)), ("resets", Int64(statistics.resets)), ("stalls", Int64(statistics.stalls)),
                ("max_concurrent_streams_seen", Int64(statistics.maxConcurrentStreamsSeen)),
                ("stream_limit_violations", Int64(statistics.streamLimitViolations)),
                ("first_request_at_ms", statistics.firstRequestAtMilliseconds), ("last_request_at_ms", statistics.lastRequestAtMilliseconds),
            ]
            return (200, "{" + fields.map { "\"\($0.0)\":\($0.1)" }.joined(separator: ",") + "}")
        case ("GET", "/_sandbox/received"):
            var lines = ""
            // A benchmark looks for a few tokens among a million: filtered here, not shipped.
            let parameters = query.split(separator: "&").map { $0.split(separator: "=", maxSplits: 1).map(String.init) }
            let tokenPrefix = parameters.first { $0.count == 2 && $0[0] == "token_prefix" }?[1] ?? ""
            // The payload only on request (`payload=1`): a relay test reads it, a benchmark's record would double.
            let withPayload = parameters.contains { $0 == ["payload", "1"] }
            for item in recorder.received() where item.token.hasPrefix(tokenPrefix) {
                lines += "{\"token\":\"\(item.token)\",\"status\":\(item.status),\"reason\":\(quoted(item.reason)),\"push_type\":\"\(item.pushType)\",\"topic\":\(quoted(item.topic)),\"priority\":\(item.priority),\"expiration\":\(item.expiration.map(String.init) ?? "null"),\"collapse_id\":\(quoted(item.collapseID)),\"channel_id\":\(quoted(item.channelID)),\"connection\":\(item.connectionID),\"at_ms\":\(item.receivedAtMilliseconds),\"team\":\(quoted(item.teamID)),\"provider_token\":\(quoted(item.providerToken))"
                if withPayload { lines += ",\"payload\":\(quoted(String(decoding: item.payload, as: UTF8.self)))" }
                lines += "}\n"
            }
            return (200, lines)
        case ("POST", "/_sandbox/reset"):
            recorder.reset()
            return (200, "{}")
        case ("PUT", "/_sandbox/rules"):
            let rules: [SandboxRule]
            do {
                rules = try JSONDecoder().decode([SandboxRule].self, from: Data(bodyBytes))
            } catch {
                return (400, "{\"error\":\(quoted("rules must be a JSON array of {token|tokenPrefix|channel, topic, status, reason, times}: \(error)"))}")
            }
            if let problem = Self.problem(in: rules) { return (400, problem.json) }
            recorder.setRules(rules)
            return (200, "{}")
        case ("PUT", "/_sandbox/faults"):
            do throws(Problem) {
                recorder.setFaults(try Self.faults(from: bodyBytes))
                return (200, "{}")
            } catch {
                return (400, error.json)
            }
        default:
            return (404, "{\"error\":\"unknown control request \(method) \(path); see SandboxControl\"}")
        }
    }

    /// A control request's bad input, naming the field.
    struct Problem: Error {
        let field: String?
        let message: String
        var json: String { "{\"error\":\(SandboxControl.quoted(message)),\"field\":\(SandboxControl.quoted(field))}" }
    }

    static let faultFields = ["goAwayEveryRequests", "latencyMs", "resetEveryRequests", "stallEveryRequests"]

    static func faults(from body: [UInt8]) throws(Problem) -> SandboxFaults {
        guard case let .object(object)? = try? JSONValue.parse(body) else {
            throw Problem(field: nil, message: "faults must be a JSON object: {\(faultFields.map { "\"\($0)\":N" }.joined(separator: ","))}")
        }
        // A misspelt fault would silently be off.
        if let key = object.keys.filter({ !faultFields.contains($0) }).min() {
            throw Problem(field: String(key.prefix(64)), message: "unknown field \"\(key.prefix(64))\" (known: \(faultFields.joined(separator: ", ")))")
        }
        var faults = SandboxFaults()
        faults.goAwayEveryRequests = try integer(object, "goAwayEveryRequests", in: SandboxFaults.everyRequests)
        faults.resetEveryRequests = try integer(object, "resetEveryRequests", in: SandboxFaults.everyRequests)
        faults.stallEveryRequests = try integer(object, "stallEveryRequests", in: SandboxFaults.everyRequests)
        faults.latency = .milliseconds(try integer(object, "latencyMs", in: SandboxFaults.latencyMilliseconds) ?? 0)
        return faults
    }

    static func problem(in rules: [SandboxRule]) -> Problem? {
        for (index, rule) in rules.enumerated() {
            if !SandboxRule.statuses.contains(rule.status) {
                let range = SandboxRule.statuses
                return Problem(field: "rules[\(index)].status", message: "rules[\(index)].status must be an HTTP status in \(range.lowerBound)…\(range.upperBound), got \(rule.status)")
            }
            if let times = rule.times, times < 0 {
                return Problem(field: "rules[\(index)].times", message: "rules[\(index)].times must be ≥ 0 (or absent: always), got \(times)")
            }
        }
        return nil
    }

    private static func integer(_ object: [String: JSONValue], _ key: String, in range: ClosedRange<Int>) throws(Problem) -> Int? {
        guard let value = object[key], value != .null else { return nil }
        guard let number = value.exactInteger, range.contains(number) else {
            throw Problem(field: key, message: "\(key) must be an integer in \(range.lowerBound)…\(range.upperBound), got \(value.rendered)")
        }
        return number
    }

    private static func quoted(_ text: String?) -> String {
        guard let text else { return "null" }
        let data = (try? JSONSerialization.data(withJSONObject: [text], options: [.withoutEscapingSlashes])) ?? Data("[\"\"]".utf8)
        return String(decoding: data.dropFirst().dropLast(), as: UTF8.self)
    }
}
