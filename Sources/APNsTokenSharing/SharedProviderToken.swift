import APNs
import Logging
import NIOConcurrencyHelpers
import PushCore
import Redis

/// Keeps one provider's token in step with the fleet's, following `SharedTokenSchedule`: it talks
/// to Redis in the background and hands each new token to the provider, whose connections read it
/// from memory. A send never waits on Redis.
final class SharedProviderToken: Sendable {
    let provider: APNsTokenProvider
    let key: String
    private let redis: RedisClient
    private let schedule: NIOLockedValueBox<SharedTokenSchedule>
    private let logger: Logger

    init(provider: APNsTokenProvider, key: String, refresh: Duration, redis: RedisClient, logger: Logger) {
        self.provider = provider
        self.key = key
        self.redis = redis
        self.schedule = NIOLockedValueBox(SharedTokenSchedule(refresh: refresh))
        var logger = logger
        logger[metadataKey: "redis.key"] = "\(key)"
        self.logger = logger
        // After ExpiredProviderToken a token is replaced as before, at 20 minutes old (APNs' rule),
        // or at the end of a shorter test period.
        provider.refreshExternally(minimumAge: min(refresh, .seconds(20 * 60)))
    }

    /// Takes the fleet's token (or, Redis failing, a token of this worker's own) before the first
    /// send, so no connection starts with a token it would have to replace at once.
    func prime() async {
        // Each step is a few Redis commands, each bounded by the client's command timeout; a few
        // steps reach a token whatever the other workers do at the same time.
        for _ in 0..<8 {
            if schedule.withLockedValue({ $0.current }) != nil { return }
            await step(.due)
            // A token about to expire in Redis is asked for again a moment later.
            let wait = schedule.withLockedValue { $0.nextDueMilliseconds } - UnixTime.now().milliseconds
            if wait > 0, schedule.withLockedValue({ $0.current }) == nil {
                guard (try? await Task.sleep(for: .milliseconds(min(wait, 1000)))) != nil else { return }
            }
        }
        if schedule.withLockedValue({ $0.current }) == nil {
            await step(.redisFailed(reason: "no token from Redis at start-up"))
        }
    }

    /// Until cancelled: wakes when the schedule says and follows it.
    func run() async {
        while !Task.isCancelled {
            let due = schedule.withLockedValue { $0.nextDueMilliseconds }
            let wait = due - UnixTime.now().milliseconds
            if wait > 0 {
                guard (try? await Task.sleep(for: .milliseconds(wait))) != nil else { return }
            }
            await step(.due)
        }
    }

    /// Feeds `event` to the schedule and carries out what it says, with Redis' answers fed back.
    private func step(_ event: SharedTokenSchedule.Event) async {
        var pending = [event]
        // A Redis whose key keeps vanishing could bounce create → read forever; the next due time
        // (always set a retry's worth ahead) picks up where this left off.
        var budget = 8
        while !pending.isEmpty, budget > 0 {
            budget -= 1
            let next = pending.removeFirst()
            let actions = schedule.withLockedValue { $0.handle(next, now: UnixTime.now().milliseconds) }
            for action in actions {
                if let answer = await perform(action) { pending.append(answer) }
            }
        }
    }

    private func perform(_ action: SharedTokenSchedule.Action) async -> SharedTokenSchedule.Event? {
        switch action {
        case .read:
            do {
                let reply = try await redis.command(["GET", key])
                switch reply {
                case .null: return .found(nil)
                case let .error(message): return .redisFailed(reason: message)
                default:
                    // Checked before use: whoever can write this key could otherwise stop the
                    // fleet's APNs sends (a garbage, forged or future-dated value).
                    guard let text = reply.text, let token = SharedTokenSchedule.Token(stored: text) else {
                        return .foundUnusable(reason: "it is not <iat>.<jwt>")
                    }
                    if let problem = provider.problem(withToken: token.jwt, issuedAt: token.issuedAt, now: Int(UnixTime.now().seconds)) {
                        return .foundUnusable(reason: problem)
                    }
                    return .found(token)
                }
            } catch {
                return .redisFailed(reason: error.message)
            }
        case .create:
            guard let token = mint() else { return nil }
            // The key lives one period: its expiry is what lets the next token be created.
            let ttl = schedule.withLockedValue { $0.refreshMilliseconds }
            do {
                let reply = try await redis.command(["SET", key, token.stored, "NX", "PX", "\(ttl)"])
                switch reply {
                case .status: return .created(token)
                case .null: return .lostCreation
                case let .error(message): return .redisFailed(reason: message)
                default: return .redisFailed(reason: "unexpected answer to SET NX")
                }
            } catch {
                return .redisFailed(reason: error.message)
            }
        case .overwrite:
            guard let token = mint() else { return nil }
            let ttl = schedule.withLockedValue { $0.refreshMilliseconds }
            do {
                let reply = try await redis.command(["SET", key, token.stored, "PX", "\(ttl)"])
                if case let .error(message) = reply { return .redisFailed(reason: message) }
                return .created(token)
            } catch {
                return .redisFailed(reason: error.message)
            }
        case let .warnReplaced(reason):
            logger.warning("the shared APNs provider token in Redis was not usable (\(reason)); replaced with this worker's own. Check who else writes pushworker:jwt:* (docs/reference/guarantees.md)")
            return nil
        case .useLocal:
            guard let token = mint() else { return nil }
            return .mintedLocally(token)
        case let .use(token):
            provider.install(jwt: token.jwt, issuedAt: token.issuedAt)
            logger.debug("provider token in use", metadata: ["apns.token.iat": "\(token.issuedAt)"])
            return nil
        case let .warnFallback(reason):
            logger.warning("cannot share the APNs provider token through Redis (\(reason)); this worker uses a token of its own until Redis answers again")
            return nil
        case .noteRejoined:
            logger.notice("Redis answers again: this worker uses the provider token shared by every worker")
            return nil
        }
    }

    /// The key was checked when the provider was made, so signing fails only on a broken OpenSSL;
    /// the provider then keeps the token it has, and mints on its own past its age limit.
    private func mint() -> SharedTokenSchedule.Token? {
        do {
            let minted = try provider.mintToken()
            return SharedTokenSchedule.Token(issuedAt: minted.issuedAt, jwt: minted.jwt)
        } catch {
            logger.error("cannot sign an APNs provider token: \(error.message)")
            return nil
        }
    }
}
