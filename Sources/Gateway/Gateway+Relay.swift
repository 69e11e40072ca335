import Foundation
import GatewayCore
import HTTP2
import HTTPTypes
import Hummingbird

/// `/relay-to/<development|production>/<device-token>[/<extra>]`: toot-relay's Web Push → APNs
/// relay (docs/reference/relay.md). No key, as toot-relay: the path's device token is the only address. So
/// every post is counted against its client address and its app (`RelayAdmission`) before
/// anything else is done with it.
extension Gateway {
    /// Read this far so that an oversized body is answered with the relay's own limit, not cut off.
    static let relayReadLimit = 64 * 1024

    static let forwardedFor = HTTPField.Name("X-Forwarded-For")!

    func relay(_ request: Request, context: GatewayRequestContext) async throws(GatewayAnswer) -> GatewayAnswer {
        let configuration = self.configuration
        guard configuration.settings.relayEnabled else {
            throw GatewayAnswer.error(404, "this gateway does not serve the relay (gateway.relay: false, or --no-relay)")
        }
        if let environment = WebPushRelay.environment(path: request.uri.path) {
            try admit(request, context: context, app: configuration.relayApp(for: environment), in: configuration)
        }
        let body: [UInt8]
        do {
            body = Array(try await request.body.collect(upTo: Self.relayReadLimit).readableBytesView)
        } catch {
            counters.add { $0.relayRefused += 1 }
            throw GatewayAnswer.error(413, "body: this relay takes at most \(WebPushRelay.maxBodyBytes) bytes")
        }
        let id = UUID().uuidString.lowercased()
        let job: RelayJob
        do {
            job = try WebPushRelay.job(
                path: request.uri.path, header: { name in HTTPField.Name(name).flatMap { request.headers[$0] } }, body: body,
                app: configuration.relayApp(for:), jobID: id, now: Int(Date().timeIntervalSince1970))
        } catch {
            counters.add { $0.relayRefused += 1 }
            throw GatewayAnswer.error(error.status, error.message)
        }
        // The worker's parser has the last word: what it would dead-letter is refused here.
        _ = try configuration.jobs.check(job.body, key: nil)
        try await publisher.publish(body: job.body, id: id)
        counters.add { $0.relayAccepted += 1 }
        var answer = GatewayAnswer.json(201) { $0.field("id", id) }
        // RFC 8030 names the message by a URL; nothing is served there (as with toot-relay).
        answer.headers.append(("Location", "/relay-to/messages/\(id)"))
        return answer
    }

    /// Takes a token from the client's bucket and the app's, or throws 429 naming the limit.
    private func admit(_ request: Request, context: GatewayRequestContext, app: String, in configuration: GatewayConfiguration) throws(GatewayAnswer) {
        let client = RelayClient(peer: context.remoteAddress?.ipAddress.flatMap(IPAddress.init),
                                 forwardedFor: request.headers[values: Self.forwardedFor],
                                 trustedProxies: configuration.settings.trustedProxies)
        let now = clock.now()
        let decision = configuration.relayAdmission.withLockedValue { $0.admit(client: client, app: app, now: now) }
        guard case let .refused(limit, seconds) = decision else { return }
        let limits = configuration.settings.relayLimits
        switch limit {
        case .address:
            counters.add { $0.relayLimitedByAddress += 1 }
            throw GatewayAnswer.relayRateLimited(
                retryAfter: seconds,
                "\(client) is over the relay's limit per client address (\(limits.perAddress.requestsPerSecond) a second, bursts of \(limits.perAddress.burst))")
        case .app:
            counters.add { $0.relayLimitedByApp += 1 }
            throw GatewayAnswer.relayRateLimited(
                retryAfter: seconds,
                "the relay's app \(app) is over its limit (\(limits.perApp.requestsPerSecond) a second, bursts of \(limits.perApp.burst))")
        }
    }
}
