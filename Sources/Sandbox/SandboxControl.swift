import Foundation
import NIOCore

/// `/_sandbox/…` requests: how tests, benchmarks and users' CI scripts look into a sandbox running
/// in another process and change its behaviour without a restart. They are answered before APNs
/// validation, need no authentication (the sandbox listens on loopback), and are not recorded.
///   GET  /_sandbox/stats      counters and first/last request times
///   GET  /_sandbox/received   every answered notification (token, status, reason, …) as JSON lines
///   POST /_sandbox/reset      clear the record and counters
///   PUT  /_sandbox/rules      body: a JSON array of rules, replacing the current ones
///   PUT  /_sandbox/faults     body: {"goAwayEveryRequests":N,"resetEveryRequests":N,"stallEveryRequests":N,"latencyMs":N}
enum SandboxControl {
    static let prefix = "/_sandbox/"

    static func answer(method: String, path: String, body: ByteBuffer?, recorder: SandboxRecorder) -> (status: Int, json: String) {
        let bodyBytes = body.map { Array($0.readableBytesView) } ?? []
        switch (method, path) {
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
            for item in recorder.received() {
                lines += "{\"token\":\"\(item.token)\",\"status\":\(item.status),\"reason\":\(quoted(item.reason)),\"push_type\":\"\(item.pushType)\",\"topic\":\(quoted(item.topic)),\"priority\":\(item.priority),\"connection\":\(item.connectionID)}\n"
            }
            return (200, lines)
        case ("POST", "/_sandbox/reset"):
            recorder.reset()
            return (200, "{}")
        case ("PUT", "/_sandbox/rules"):
            do {
                recorder.setRules(try JSONDecoder().decode([SandboxRule].self, from: Data(bodyBytes)))
                return (200, "{}")
            } catch {
                return (400, "{\"error\":\(quoted("rules must be a JSON array of {token|tokenPrefix, status, reason, times}: \(error)"))}")
            }
        case ("PUT", "/_sandbox/faults"):
            guard let object = try? JSONSerialization.jsonObject(with: Data(bodyBytes)) as? [String: Any] else {
                return (400, "{\"error\":\"faults must be a JSON object\"}")
            }
            var faults = SandboxFaults()
            faults.goAwayEveryRequests = (object["goAwayEveryRequests"] as? NSNumber)?.intValue
            faults.resetEveryRequests = (object["resetEveryRequests"] as? NSNumber)?.intValue
            faults.stallEveryRequests = (object["stallEveryRequests"] as? NSNumber)?.intValue
            faults.latency = .milliseconds((object["latencyMs"] as? NSNumber)?.intValue ?? 0)
            recorder.setFaults(faults)
            return (200, "{}")
        default:
            return (404, "{\"error\":\"unknown control request \(method) \(path); see SandboxControl\"}")
        }
    }

    private static func quoted(_ text: String?) -> String {
        guard let text else { return "null" }
        let data = (try? JSONSerialization.data(withJSONObject: [text], options: [.withoutEscapingSlashes])) ?? Data("[\"\"]".utf8)
        return String(decoding: data.dropFirst().dropLast(), as: UTF8.self)
    }
}
