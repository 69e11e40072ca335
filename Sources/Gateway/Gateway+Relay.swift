import Foundation
import GatewayCore
import HTTPTypes
import Hummingbird

/// `/relay-to/<development|production>/<device-token>[/<extra>]`: toot-relay's Web Push → APNs
/// relay (docs/relay.md). No key, as toot-relay: the path's device token is the only address.
extension Gateway {
    /// Read this far so that an oversized body is answered with the relay's own limit, not cut off.
    static let relayReadLimit = 64 * 1024

    func relay(_ request: Request) async throws(GatewayAnswer) -> GatewayAnswer {
        let body: [UInt8]
        do {
            body = Array(try await request.body.collect(upTo: Self.relayReadLimit).readableBytesView)
        } catch {
            counters.add { $0.relayRefused += 1 }
            throw GatewayAnswer.error(413, "body: this relay takes at most \(WebPushRelay.maxBodyBytes) bytes")
        }
        let id = UUID().uuidString.lowercased()
        let settings = self.settings
        let job: RelayJob
        do {
            job = try WebPushRelay.job(
                path: request.uri.path, header: { name in HTTPField.Name(name).flatMap { request.headers[$0] } }, body: body,
                app: { $0 == .production ? settings.relayProductionApp : settings.relayDevelopmentApp },
                jobID: id, now: Int(Date().timeIntervalSince1970))
        } catch {
            counters.add { $0.relayRefused += 1 }
            throw GatewayAnswer.error(error.status, error.message)
        }
        // The worker's parser has the last word: what it would dead-letter is refused here.
        _ = try jobs.check(job.body, key: nil)
        try await publisher.publish(body: job.body, id: id)
        counters.add { $0.relayAccepted += 1 }
        var answer = GatewayAnswer.json(201) { $0.field("id", id) }
        // RFC 8030 names the message by a URL; nothing is served there (as with toot-relay).
        answer.headers.append(("Location", "/relay-to/messages/\(id)"))
        return answer
    }
}
