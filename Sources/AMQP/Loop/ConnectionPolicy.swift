import PushCore

/// What the AMQP owner thread decides, as one value: when acks go out and how they coalesce,
/// when buffered frames are written, which publishes wait (connection.blocked), when a publish's
/// confirm is overdue and when the broker counts as gone, and what a lost connection fails.
/// It takes events (a delivery, an ack asked for, a publish, a confirm, a tick, a loss) and
/// returns what to do. Time is passed in, and publishes are tokens it hands back (`Publish`), so
/// every rule is tested without a broker, a wait or a closure. One lives in each connected state
/// of `ConnectionMachine`.
struct ConnectionPolicy<Publish> {
    typealias Instant = ContinuousClock.Instant
    typealias AckFrame = (tag: UInt64, multiple: Bool)
    typealias Settled = PublishConfirms<Publish>.Settled

    typealias Timing = ConnectionTiming

    let timing: Timing
    private(set) var unacked = UnackedDeliveries()
    private(set) var confirms = PublishConfirms<Publish>()
    /// A single ack not yet sent, when it was asked for, and its delivery's consumer (-1: a tag
    /// the channel does not know, dropped when the acks go).
    private struct PendingAck {
        var tag: UInt64
        var requestedAt: StoredInstant
        var consumer: Int
    }
    /// Single acks not yet sent, in the order they were asked for: the first has waited longest.
    /// Each keeps its own time, so that acks held behind a gap are timed from when they were
    /// asked for, not from an earlier batch that has gone out: with one time for the batch, acks
    /// that keep arriving a little out of order all go as singles once the first batch is old.
    private var pendingAcks: [PendingAck] = []
    private var pendingAcksSince: Instant? { pendingAcks.first?.requestedAt.instant }
    /// How many of `pendingAcks` belong to each consumer, by its index: held against its prefetch.
    private var pendingAcksByConsumer: [Int] = []
    /// Whether `pendingAcks` holds the oldest unacked delivery (then they can start with a `multiple`).
    private var pendingAcksIncludeOldest = false
    /// Since when publishes have waited for a confirm without any arriving (nil: none waits).
    private(set) var confirmsWaitingSince: Instant?
    /// connection.blocked from the broker: publishes wait here instead of blocking the thread in send().
    private(set) var blocked = false
    private var heldPublishes: [Publish] = []
    /// When frames were first left buffered for `writeCoalescing`.
    private var framesBufferedSince: Instant?
    init(timing: Timing = Timing()) {
        self.timing = timing
    }

    var pendingAckCount: Int { pendingAcks.count }
    var heldPublishCount: Int { heldPublishes.count }

    // MARK: Deliveries and acks

    /// `consumer`: the index of the consumer it went to (`ConsumerTable`).
    mutating func delivered(_ tag: UInt64, consumer: Int = 0) {
        unacked.insert(tag, consumer: consumer)
    }

    /// A single ack of the current connection: it waits to go out with others (`dueAcks`).
    mutating func ackRequested(_ tag: UInt64, now: @autoclosure () -> Instant) {
        let consumer = unacked.consumer(of: tag) ?? -1
        pendingAcks.append(PendingAck(tag: tag, requestedAt: StoredInstant(now()), consumer: consumer))
        if consumer >= 0 {
            if consumer >= pendingAcksByConsumer.count {
                pendingAcksByConsumer.append(contentsOf: repeatElement(0, count: consumer + 1 - pendingAcksByConsumer.count))
            }
            pendingAcksByConsumer[consumer] += 1
        }
        if tag == unacked.oldest { pendingAcksIncludeOldest = true }
    }

    enum AckFlush: Equatable { case oldestRun, all }

    /// Acks go out together, as few `multiple` acks as possible: one frame per batch instead of
    /// one per job (the broker's cost per message dominated workloads of one-device jobs).
    /// - `oldestRun`: once `ackDelay` passed or `ackBatch` are pending, if they include the oldest
    ///   unacked delivery: the run from it goes as one `multiple`; acks after a gap wait for it.
    ///   RabbitMQ finds a single ack's tag by walking the channel's unacked deliveries from the
    ///   oldest (`rabbit_channel:collect_acks`), so singles sent past thousands of deliveries
    ///   still in flight cost it more than the jobs did (measured:
    ///   docs/evidence/code-measurements.md#batched-acks).
    /// - `all`, singles included: once one waited `ackHoldLimit`, or half of a consumer's
    ///   prefetch window waits on them, so a slow job never holds the acks of later ones for long
    ///   and the broker never runs out of a consumer's window because of the wait.
    /// `prefetches`: each consumer's, by index (`ConsumerTable.activePrefetches`).
    func acksDue(now: Instant, prefetches: [Int]) -> AckFlush? {
        guard let since = pendingAcksSince, !pendingAcks.isEmpty else { return nil }
        if now - since >= timing.ackHoldLimit || fillsHalfAWindow(prefetches) { return .all }
        guard pendingAcksIncludeOldest, pendingAcks.count >= timing.ackBatch || now - since >= timing.ackDelay else { return nil }
        return .oldestRun
    }

    /// Whether the acks waiting for some consumer's deliveries are half its prefetch.
    private func fillsHalfAWindow(_ prefetches: [Int]) -> Bool {
        for (consumer, waiting) in pendingAcksByConsumer.enumerated() where waiting > 0 {
            if consumer < prefetches.count, waiting * 2 >= prefetches[consumer] { return true }
        }
        return false
    }

    /// The ack frames due now (none when nothing is due).
    mutating func dueAcks(now: @autoclosure () -> Instant, prefetches: [Int]) -> [AckFrame] {
        guard !pendingAcks.isEmpty, let flush = acksDue(now: now(), prefetches: prefetches) else { return [] }
        return takeAcks(holdingGaps: flush == .oldestRun)
    }

    /// Every pending ack, now: before a nack, another settle, an RPC or the end, which must not
    /// overtake them.
    mutating func allAcks() -> [AckFrame] {
        takeAcks(holdingGaps: false)
    }

    /// Milliseconds until the pending acks are due (nil when none are pending).
    func millisecondsUntilAcksDue(now: Instant) -> Int32? {
        guard let since = pendingAcksSince, !pendingAcks.isEmpty else { return nil }
        let remaining = (pendingAcksIncludeOldest ? timing.ackDelay : timing.ackHoldLimit) - (now - since)
        return max(0, Int32(Backoff.seconds(remaining) * 1000 + 0.999))
    }

    /// The pending acks as frames; with `holdingGaps`, those after a gap stay pending.
    private mutating func takeAcks(holdingGaps: Bool) -> [AckFrame] {
        guard !pendingAcks.isEmpty else {
            pendingAcksIncludeOldest = false
            return []
        }
        let (plan, held, _) = unacked.planAcks(pendingAcks.map(\.tag), holdingGaps: holdingGaps)
        // The held ones are still outstanding; they keep their order and times (`ackHoldLimit`
        // counts from the first of them asked for).
        for index in pendingAcksByConsumer.indices { pendingAcksByConsumer[index] = 0 }
        if held.isEmpty {
            pendingAcks.removeAll(keepingCapacity: true)
        } else {
            pendingAcks.removeAll { !unacked.contains($0.tag) }
            for ack in pendingAcks where ack.consumer >= 0 { pendingAcksByConsumer[ack.consumer] += 1 }
        }
        pendingAcksIncludeOldest = held.first != nil && held.first == unacked.oldest
        return plan
    }

    /// An ack with `multiple`, or a nack: nil when the channel does not know the tag (an
    /// old-generation or double-settled tag would be a 406 channel error that requeues everything
    /// in flight). Pending acks go first (`allAcks`): they may cover the same tags.
    mutating func settle(_ tag: UInt64, multiple: Bool) -> AckFrame? {
        if multiple {
            return unacked.removeThrough(tag).map { ($0, true) }
        }
        guard unacked.contains(tag) else { return nil }
        unacked.remove(tag)
        return (tag, false)
    }

    // MARK: Publishes

    /// A publish to write now (true), or held while the broker blocks the connection (false).
    mutating func admit(_ publish: Publish) -> Bool {
        guard blocked else { return true }
        heldPublishes.append(publish)
        return false
    }

    /// A publish was written: it waits for its confirm. `returnKey`: a mandatory publish's, which a
    /// basic.return is matched against.
    mutating func written(_ publish: Publish, returnKey: PublishConfirms<Publish>.ReturnKey?, now: @autoclosure () -> Instant) {
        confirms.record(publish, returnKey: returnKey)
        if confirmsWaitingSince == nil { confirmsWaitingSince = now() }
    }

    mutating func confirmed(_ deliveryTag: UInt64, multiple: Bool, nacked: Bool, now: Instant) -> Settled {
        let settled = confirms.settle(deliveryTag: deliveryTag, multiple: multiple, nacked: nacked)
        confirmProgressed(now: now)
        return settled
    }

    mutating func returned(_ key: PublishConfirms<Publish>.ReturnKey, replyCode: UInt16, replyText: String) -> Bool {
        confirms.markReturned(key, replyCode: replyCode, replyText: replyText)
    }

    /// The broker closed the publish channel: what was in flight on it is lost; a fresh channel
    /// numbers from 1.
    mutating func publishChannelClosed(_ error: AMQPError) -> Settled {
        confirmsWaitingSince = nil
        return confirms.reset(failingWith: error)
    }

    mutating func brokerBlocked() {
        blocked = true
    }

    /// The held publishes, to write now in their order.
    mutating func brokerUnblocked(now: Instant) -> [Publish] {
        blocked = false
        // The waits for confirms start again: the broker could not confirm while it read nothing.
        confirmProgressed(now: now)
        confirms.restartAges(now: now)
        defer { heldPublishes = [] }
        return heldPublishes
    }

    private mutating func confirmProgressed(now: Instant) {
        confirmsWaitingSince = confirms.outstanding > 0 ? now : nil
    }

    // MARK: Time

    enum ConfirmCheck {
        case fine
        /// Publishes whose confirm is overdue: fail them (they may or may not be stored).
        case expired(Settled)
        /// Nothing confirmed for `confirmTimeout`: drop the connection.
        case brokerSilent(AMQPError)
    }

    /// Not while the broker has blocked the connection (a memory or disk alarm): it may stop reading
    /// for longer than the timeout, and reconnecting then would only send the jobs held again.
    mutating func checkConfirms(now: Instant) -> ConfirmCheck {
        guard !blocked, confirms.outstanding > 0 else { return .fine }
        if let since = confirmsWaitingSince, now - since >= timing.confirmTimeout {
            return .brokerSilent(AMQPError(code: .timeout, message: "the broker confirmed none of \(confirms.outstanding) publishes for \(timing.confirmTimeout); reconnecting"))
        }
        confirms.mark(now: now)
        let expired = confirms.expire(writtenBefore: now - timing.publishAgeLimit, error: AMQPError(
            code: .timeout, message: "the broker did not confirm the publish within \(timing.publishAgeLimit); treated as not stored"))
        if confirms.outstanding == 0 { confirmsWaitingSince = nil }
        return expired.isEmpty ? .fine : .expired(expired)
    }

    enum Write: Equatable { case now, coalesce }

    /// Whether the buffered frames go out now. An idle loop lets a few publishes and acks wait up
    /// to `writeCoalescing` for more, so the broker reads them in one go: at one-token-job rates,
    /// a write per wake-up kept it handling a few frames at a time.
    mutating func write(idle: Bool, hasBufferedFrames: Bool, now: Instant) -> Write {
        if idle, hasBufferedFrames, framesBufferedSince.map({ now - $0 < timing.writeCoalescing }) ?? true {
            if framesBufferedSince == nil { framesBufferedSince = now }
            return .coalesce
        }
        framesBufferedSince = nil
        return .now
    }

    /// How long an idle loop may wait for the socket: `base` (well under the heartbeat), less
    /// when acks or coalesced frames are due sooner.
    func pollTimeout(base: Int32, now: Instant) -> Int32 {
        var timeout = base
        if let acksDue = millisecondsUntilAcksDue(now: now) { timeout = min(timeout, acksDue) }
        if framesBufferedSince != nil { timeout = min(timeout, 1) }
        return timeout
    }

    // MARK: The connection

    /// The connection is gone (or a new one starts): outstanding and held publishes fail with
    /// `error` (they may or may not have been stored: the caller must treat them as not
    /// published), unacked deliveries are forgotten (the broker requeues them), acks still pending
    /// are moot. The one reset: connect, loss and the end all come through here.
    mutating func reset(failingWith error: AMQPError) -> Settled {
        var failed = confirms.reset(failingWith: error)
        failed += heldPublishes.map { ($0, .failure(error)) }
        self = ConnectionPolicy(timing: timing)
        return failed
    }
}
