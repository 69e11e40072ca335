import AMQP
import Logging
import PushCore
import Redis
import NIOConcurrencyHelpers

/// Bounds the duplicates of a fan-out that is redelivered while (or just after) it was split: the
/// worker notes in Redis each chunk job the broker confirmed, and a redelivered fan-out skips the
/// chunks noted there instead of publishing every one again.
///
/// A chunk is named by the SHA-256 of its devices, so it is skipped only when exactly those devices
/// already sit in a confirmed chunk job of the same message. If the group changed in between (or
/// SSCAN pages differently), the chunks differ and are published again: duplicates, never a lost
/// device. Redis trouble only switches the markers off for that job, never fails it. Only deliveries
/// the broker flags as redelivered look markers up (a fresh message cannot have any), and the
/// markers go once the fan-out is acked, so a later job with an identical body starts clean.
final class ChunkMarkers: Sendable {
    /// Long enough for any redelivery; a forgotten marker set only costs Redis a few bytes until then.
    static let expirySeconds = 3600

    let key: String
    private let redis: RedisClient
    private let lookUp: Bool
    private let logger: Logger
    private struct State {
        var confirmed: [String] = []
        var disabled = false
        var written = false
        var skipped = 0
    }
    private let state = NIOLockedValueBox(State())

    init(redis: RedisClient, jobQueue: String, delivery: AMQPDelivery, logger: Logger) {
        self.redis = redis
        self.key = "pushworker:fanout:" + Digest.hex([Array(jobQueue.utf8), Array((delivery.properties.messageID ?? "").utf8), delivery.body])
        self.lookUp = delivery.redelivered
        self.logger = logger
    }

    static func digest(_ devices: [DeviceToken]) -> String {
        Digest.hex(devices.map(\.identity))
    }

    var skipped: Int { state.withLockedValue { $0.skipped } }

    /// Whether a chunk with exactly these devices was confirmed by the broker in an earlier delivery.
    func alreadyQueued(_ digest: String) async -> Bool {
        guard lookUp, !state.withLockedValue({ $0.disabled }) else { return false }
        do {
            guard case .integer(1) = try await redis.command(["SISMEMBER", key, digest]) else { return false }
            state.withLockedValue { $0.skipped += 1 }
            return true
        } catch {
            disable(error)
            return false
        }
    }

    /// Called from the publish confirm (any thread).
    func confirmed(_ digest: String) {
        state.withLockedValue { $0.confirmed.append(digest) }
    }

    /// Writes the confirmed chunks noted since the last call.
    func flush() async {
        let digests: [String] = state.withLockedValue { state in
            guard !state.disabled, !state.confirmed.isEmpty else { return [] }
            defer { state.confirmed.removeAll() }
            return state.confirmed
        }
        guard !digests.isEmpty else { return }
        do {
            let added = try await redis.command(["SADD", key] + digests)
            if case let .error(text) = added { throw RedisError(.reply, "SADD: \(text)") }
            if !state.withLockedValue({ $0.written }) {
                _ = try await redis.command(["EXPIRE", key, String(Self.expirySeconds)])
                state.withLockedValue { $0.written = true }
            }
        } catch {
            disable(error)
        }
    }

    /// The fan-out is acked: its markers are of no further use.
    func clear() async {
        guard lookUp || state.withLockedValue({ $0.written }) else { return }
        _ = try? await redis.command(["DEL", key])
    }

    private func disable(_ error: any Error) {
        let first = state.withLockedValue { state in
            defer { state.disabled = true }
            return !state.disabled
        }
        if first {
            logger.warning("cannot keep chunk markers in Redis; a redelivery of this fan-out would publish every chunk again",
                           metadata: [LogKeys.error: "\(error)"])
        }
    }
}
