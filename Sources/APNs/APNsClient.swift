import HTTP2
import Logging
import NIOConcurrencyHelpers
import APNsCore
import PushCore
import PushTransport
import HTTP2Transport

/// Sends notifications for one app over a pool of HTTP/2 connections and turns every answer, or
/// the lack of one, into a `DeliveryOutcome`. It never throws per notification: a transport
/// failure is an outcome too (retryable), so no device can fall through the cracks.
public final class APNsClient: PushTransport {
    public let configuration: APNsConfiguration
    let http: HTTP2Client
    private let builder: APNsRequestBuilder
    private let headerCache = APNsHeaderCache()
    let logger: Logger
    /// The channel-management client, made by the first channel operation (`BroadcastChannelManaging`).
    let channelManagers = NIOLockedValueBox<APNsChannelManager?>(nil)

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
        // Only apns-id (apns-request-id for a broadcast) is read from a response (the reason and
        // timestamp are in the body).
        http.keptResponseHeaders = ["apns-id", "apns-request-id"]
        if case let .certificate(identity) = configuration.credentials { http.identity = identity }
        self.configuration = configuration
        self.http = HTTP2Client(configuration: http, logger: logger)
        self.builder = APNsRequestBuilder(defaultTopic: configuration.topic)
        self.logger = logger
    }

    public var credentialRenewals: Int { tokenProvider?.tokenChanges ?? 0 }

    public var tokenProvider: APNsTokenProvider? {
        if case let .token(provider) = configuration.credentials { return provider }
        return nil
    }

    public var statistics: TransportStatistics { TransportStatistics(http.statistics) }
    /// APNs names each notification by the apns-id the worker sends.
    public var carriesRequestIDs: Bool { true }
    /// Requests APNs lets this client's connections have in flight now (`HTTP2Client.streamCapacity`).
    public var streamCapacity: Int { http.streamCapacity }
    public func noteDemandHeldBack(_ heldBack: Bool) { http.noteDemandHeldBack(heldBack) }

    public func send(_ job: PushJob, to device: DeviceToken, requestID: String, completion: @escaping @Sendable (PushResult) -> Void) {
        let options = job.apns
        if let channel = options.channel { return sendBroadcast(job, options: options, channel: channel, requestID: requestID, completion: completion) }
        send(APNsNotification(token: device, topic: options.topic, pushType: options.pushType, priority: options.priority,
                              expiration: job.expiration, collapseID: options.collapseID, apnsID: requestID, payload: job.payload),
             completion: completion)
    }

    /// `completion` runs on the connection pool's I/O thread: keep it short.
    public func send(_ notification: APNsNotification, completion: @escaping @Sendable (PushResult) -> Void) {
        let headers: RequestHeaderBlock
        do {
            try APNsRequestBuilder.checkPayload(of: notification)
            let authorization = try tokenProvider?.authorizationHeader()
            headers = try headerCache.block(for: notification, authorization: authorization) { () throws(APNsRequestProblem) in
                http.sharedHeaders(method: "POST", headers: try builder.sharedHeaders(for: notification.headerFields, authorization: authorization))
            }
        } catch let problem as APNsRequestProblem {
            completion(PushResult(status: 0, reason: problem.reason, outcome: DeliveryOutcome(apnsStatus: 400, reason: problem.reason)))
            return
        } catch {
            completion(PushResult(status: 0, reason: "\(error)", outcome: .credentialsProblem(reason: "\(error)")))
            return
        }
        let sentID = notification.apnsID
        // APNs answers with the apns-id it was sent: read it from the response only when we sent none.
        http.send(headers: headers, path: APNsRequestBuilder.path(for: notification.token),
                  requestHeader: APNsRequestBuilder.apnsIDHeader(sentID), body: notification.payload,
                  keepsResponseHeaders: sentID == nil) { result in
            var answer = switch result {
            case let .success(response): Self.result(from: response)
            case let .failure(error): PushResult(transportError: error)
            }
            // Without an answer (a timeout, a lost connection) the id is still the one we sent.
            if answer.requestID == nil { answer.requestID = sentID }
            completion(answer)
        }
    }

    public func send(_ notification: APNsNotification) async -> PushResult {
        await withCheckedContinuation { continuation in
            send(notification) { continuation.resume(returning: $0) }
        }
    }

    public func shutdown() async {
        await http.shutdown()
        if let manager = channelManagers.withLockedValue({ $0 }) { await manager.shutdown() }
    }

    static func result(from response: HTTP2Response) -> PushResult {
        let apnsID = response.header("apns-id")
        guard response.status != 200 else {
            return PushResult(status: 200, reason: nil, requestID: apnsID, outcome: .sent)
        }
        var reason: String?
        var timestamp: Int?
        // The project's parser: JSONSerialization on Linux reads numbers loosely (`1` as `true`).
        if !response.body.isEmpty, case let .object(object)? = try? JSONValue.parse(response.body) {
            if case let .string(text)? = object["reason"] { reason = text }
            timestamp = object["timestamp"]?.exactInteger
        }
        return PushResult(status: response.status, reason: reason, timestamp: timestamp, requestID: apnsID,
                          outcome: DeliveryOutcome(apnsStatus: response.status, reason: reason))
    }
}
