import HTTP2
import Logging
import APNsCore
import PushCore

/// Sends notifications for one app over a pool of HTTP/2 connections and turns every answer, or
/// the lack of one, into a `DeliveryOutcome`. It never throws per notification: a transport
/// failure is an outcome too (retryable), so no device can fall through the cracks.
public final class APNsClient: Sendable {
    public let configuration: APNsConfiguration
    private let http: HTTP2Client
    private let builder: APNsRequestBuilder
    private let headerCache = APNsHeaderCache()
    private let logger: Logger

    public init(configuration: APNsConfiguration, logger: Logger) throws(APNsConfigurationError) {
        let endpoint = try configuration.endpoint()
        var http = HTTP2ClientConfiguration(host: endpoint.host, port: endpoint.port)
        http.extraCAFile = configuration.extraCAFile
        http.proxy = configuration.proxy
        http.maxConnections = configuration.maxConnections
        http.requestTimeout = configuration.requestTimeout
        http.connectTimeout = configuration.connectTimeout
        http.maxStreamsPerConnection = configuration.maxStreamsPerConnection
        http.maxRequestsPerSecondPerConnection = configuration.maxNotificationsPerSecondPerConnection
        http.idlePingInterval = configuration.idlePingInterval
        http.idleConnectionTimeout = configuration.idleConnectionTimeout
        // Only apns-id is read from a response (the reason and timestamp are in the body).
        http.keptResponseHeaders = ["apns-id"]
        if case let .certificate(identity) = configuration.credentials { http.identity = identity }
        self.configuration = configuration
        self.http = HTTP2Client(configuration: http, logger: logger)
        self.builder = APNsRequestBuilder(defaultTopic: configuration.topic)
        self.logger = logger
    }

    public var tokenProvider: APNsTokenProvider? {
        if case let .token(provider) = configuration.credentials { return provider }
        return nil
    }

    public var statistics: HTTP2ClientStatistics { http.statistics }
    /// Requests APNs lets this client's connections have in flight now (`HTTP2Client.streamCapacity`).
    public var streamCapacity: Int { http.streamCapacity }

    /// `completion` runs on the connection pool's I/O thread: keep it short.
    public func send(_ notification: APNsNotification, completion: @escaping @Sendable (APNsResult) -> Void) {
        let headers: RequestHeaderBlock
        do {
            try APNsRequestBuilder.checkPayload(of: notification)
            let authorization = try tokenProvider?.authorizationHeader()
            headers = try headerCache.block(for: notification, authorization: authorization) { () throws(APNsRequestProblem) in
                http.sharedHeaders(method: "POST", headers: try builder.sharedHeaders(for: notification.headerFields, authorization: authorization))
            }
        } catch let problem as APNsRequestProblem {
            completion(APNsResult(status: 0, reason: problem.reason, outcome: DeliveryOutcome(apnsStatus: 400, reason: problem.reason)))
            return
        } catch {
            completion(APNsResult(status: 0, reason: "\(error)", outcome: .credentialsProblem(reason: "\(error)")))
            return
        }
        let sentID = notification.apnsID
        // APNs answers with the apns-id it was sent: read it from the response only when we sent none.
        http.send(headers: headers, path: APNsRequestBuilder.path(for: notification.token),
                  requestHeader: APNsRequestBuilder.apnsIDHeader(sentID), body: notification.payload,
                  keepsResponseHeaders: sentID == nil) { result in
            var answer = switch result {
            case let .success(response): Self.result(from: response)
            case let .failure(error): Self.result(from: error)
            }
            // Without an answer (a timeout, a lost connection) the id is still the one we sent.
            if answer.apnsID == nil { answer.apnsID = sentID }
            completion(answer)
        }
    }

    public func send(_ notification: APNsNotification) async -> APNsResult {
        await withCheckedContinuation { continuation in
            send(notification) { continuation.resume(returning: $0) }
        }
    }

    public func shutdown() async {
        await http.shutdown()
    }

    static func result(from response: HTTP2Response) -> APNsResult {
        let apnsID = response.header("apns-id")
        guard response.status != 200 else {
            return APNsResult(status: 200, reason: nil, apnsID: apnsID, outcome: .sent)
        }
        var reason: String?
        var timestamp: Int?
        // The project's parser: JSONSerialization on Linux reads numbers loosely (`1` as `true`).
        if !response.body.isEmpty, case let .object(object)? = try? JSONValue.parse(response.body) {
            if case let .string(text)? = object["reason"] { reason = text }
            timestamp = object["timestamp"]?.exactInteger
        }
        return APNsResult(status: response.status, reason: reason, timestamp: timestamp, apnsID: apnsID,
                          outcome: DeliveryOutcome(apnsStatus: response.status, reason: reason))
    }

    static func result(from error: HTTP2Error) -> APNsResult {
        // No answer means APNs may or may not have the notification; retrying risks a duplicate,
        // not retrying risks a loss, and the contract is at-least-once.
        let reason: String = switch error.code {
        case .connectFailed: "ConnectFailed"
        case .tlsFailed: "TLSFailed"
        case .refused: "Refused"
        case .connectionLost: "ConnectionLost"
        case .timeout: "Timeout"
        case .unsent: "Unsent"
        case .protocolError: "ProtocolError"
        case .shutdown: "Shutdown"
        default: "\(error.code)"
        }
        if error.code == .tlsFailed {
            // A refused or expired client certificate, or a server we cannot verify: no device is to
            // blame and every other one would fail the same way, so the worker pauses instead.
            return APNsResult(status: 0, reason: reason, outcome: .credentialsProblem(reason: "\(reason): \(error.message)"))
        }
        if error.requestWasNotProcessed {
            // APNs never saw it (unreachable, refused stream): an outage, not this device's attempt.
            return APNsResult(status: 0, reason: reason, outcome: .unavailable(reason: "\(reason): \(error.message)"))
        }
        return APNsResult(status: 0, reason: reason, outcome: .retryable(reason: "\(reason): \(error.message)"))
    }
}
