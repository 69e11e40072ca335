import APNsCore
import HTTP2
import PushCore
import PushTransport

/// Live Activity broadcasts (Apple, "Sending broadcast push notification requests to APNs"): one
/// request to `/4/broadcasts/apps/<bundle ID>` on the app's push host reaches every activity
/// subscribed to the channel. Broadcasts are few (one per update of a game, not per device), so
/// they take the plain request path rather than the cached header blocks of device pushes.
extension APNsClient {
    func sendBroadcast(_ job: PushJob, options: APNsJobOptions, channel: String, requestID: String,
                       completion: @escaping @Sendable (PushResult) -> Void) {
        guard let bundleID = options.topic.map({ APNsPushType.liveactivity.bundleID(fromTopic: $0) }) ?? configuration.topic else {
            let reason = "no topic: a broadcast goes to /4/broadcasts/apps/<bundle ID>; give the app's topic or the job's"
            return completion(PushResult(status: 0, reason: reason, requestID: requestID, outcome: .permanentFailure(reason: reason)))
        }
        // The bundle ID goes into the path: a job's topic with a path's own characters is no bundle ID.
        guard bundleID.utf8.allSatisfy({ $0 > 0x20 && $0 < 0x7F && $0 != UInt8(ascii: "/") && $0 != UInt8(ascii: "?") && $0 != UInt8(ascii: "%") && $0 != UInt8(ascii: "#") }) else {
            let reason = "topic \(bundleID.prefix(80)) is not a bundle ID (it would change the broadcast's path)"
            return completion(PushResult(status: 0, reason: reason, requestID: requestID, outcome: .permanentFailure(reason: reason)))
        }
        var headers = [
            HTTP2Header(name: "apns-channel-id", value: channel),
            HTTP2Header(name: "apns-push-type", value: APNsPushType.liveactivity.rawValue),
            HTTP2Header(name: "apns-priority", value: String(options.priority)),
            // Required on every broadcast; 0 on a channel that stores nothing (the worker derives
            // it from the channel's storage policy before sending).
            HTTP2Header(name: "apns-expiration", value: String(job.expiration)),
            HTTP2Header(name: "apns-request-id", value: requestID),
        ]
        if let tokenProvider {
            do {
                headers.append(HTTP2Header(name: "authorization", value: try tokenProvider.authorizationHeader(), neverIndex: true))
            } catch {
                return completion(PushResult(status: 0, reason: error.message, outcome: .credentialsProblem(reason: error.message)))
            }
        }
        let request = HTTP2Request(method: "POST", path: "/4/broadcasts/apps/\(bundleID)", headers: headers, body: job.payload)
        http.send(request) { result in
            var answer = switch result {
            case let .success(response): Self.broadcastResult(from: response)
            case let .failure(error): PushResult(transportError: error)
            }
            if answer.requestID == nil { answer.requestID = requestID }
            completion(answer)
        }
    }

    /// A broadcast's answer: named by `apns-request-id`, and never a verdict on a device token.
    static func broadcastResult(from response: HTTP2Response) -> PushResult {
        var result = Self.result(from: response)
        result.requestID = response.header("apns-request-id")
        if case let .tokenInvalid(reason) = result.outcome { result.outcome = .permanentFailure(reason: reason) }
        result.timestamp = nil
        return result
    }
}
