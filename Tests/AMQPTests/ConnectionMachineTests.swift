@testable import AMQP
import Testing

/// The AMQP owner thread's decisions as one value: whole lose-and-reconnect scenarios driven by
/// events, with the clock passed in; publishes and admin requests are known by a name. The broker suites
/// (`AMQPLoopBrokerTests`, `AMQPBrokerTests`) prove the same against RabbitMQ.
@Suite struct ConnectionMachineTests {
    typealias Machine = ConnectionMachine

    /// A publish known by its id (its routing key); the machine never calls its completion.
    static func publish(_ id: Int) -> PublishRequest {
        PublishRequest(exchange: "", routingKey: "\(id)", body: [], properties: AMQPProperties(), mandatory: false, completion: { _ in })
    }

    /// An admin request known by its name (the queue it names).
    static func admin(_ name: String) -> AdminCommand {
        AdminCommand(request: .purge(queue: name), completion: { _ in })
    }

    static func name(_ command: AdminCommand) -> String {
        if case .purge(let queue) = command.request { return queue }
        return "?"
    }
    let start = ContinuousClock.now
    static let nodes = [
        AMQPEndpoint(host: "127.0.0.1", port: 5672, user: "guest", password: "guest", vhost: "/", tls: false),
        AMQPEndpoint(host: "127.0.0.1", port: 5673, user: "guest", password: "guest", vhost: "/", tls: false),
    ]

    func machine(nodes: [AMQPEndpoint] = Self.nodes) -> Machine {
        Machine(rotation: EndpointRotation(nodes), reconnectDelay: .milliseconds(100) ... .seconds(2), now: start)
    }

    /// A machine connected (generation 1) with the consumers of `queues` running at `prefetch`.
    func connected(queues: [String] = [], prefetch: UInt16 = 10) -> Machine {
        var machine = machine()
        for queue in queues { _ = machine.consume(queue: queue, prefetch: prefetch, maxBodyBytes: 1024) }
        connect(&machine)
        return machine
    }

    /// Connects when due and answers every consume with its consume-ok.
    func connect(_ machine: inout Machine, at now: ContinuousClock.Instant? = nil) {
        let now = now ?? machine.reconnectAt ?? start
        guard case .connect? = machine.attemptDue(now: now) else { Issue.record("no attempt at \(now)"); return }
        let starts = machine.opened()
        _ = machine.established()
        for case .startConsumer(_, let wireTag, _) in starts {
            _ = machine.consumeOk(channel: ConnectionChannels.consume, wireTag: wireTag)
        }
    }

    /// An action as text, for comparisons (`Action` holds errors and events, which are not Equatable).
    static func describe(_ action: Machine.Action) -> String {
        switch action {
        case .connect(let node): "connect \(node.port)"
        case .reportConnected(let generation): "connected \(generation)"
        case .reportConnectFailed: "connect failed"
        case .reportDisconnected: "disconnected"
        case .drop(let error): "drop \(error.code)"
        case .flush: "flush"
        case .sendAcks(let acks): "acks " + acks.map { "\($0.tag)\($0.multiple ? "+" : "")" }.joined(separator: ",")
        case .ack(let frame): "ack \(frame.tag)\(frame.multiple ? "+" : "")"
        case .nack(let frame, let requeue): "nack \(frame.tag)\(frame.multiple ? "+" : "") requeue \(requeue)"
        case .ignoreSettle(let tag, let reason): "ignore \(tag.value) \(reason)"
        case .deliver(let consumer, let tag): "deliver \(tag.connectionGeneration).\(tag.value) to \(consumer)"
        case .requeueUnknownDelivery(_, let deliveryTag, _): "requeue \(deliveryTag)"
        case .startConsumer(let queue, let wireTag, let prefetch): "start \(queue) \(wireTag) \(prefetch)"
        case .cancelConsumer(let wireTag): "cancel \(wireTag)"
        case .report(let event): "report \(event)"
        case .write(let request): "write \(request.routingKey)"
        case .complete(let settled): "complete " + settled.map { "\($0.publish.routingKey):\((try? $0.result.get()) != nil ? "ok" : "failed")" }.joined(separator: ",")
        case .completeOverdue(let settled): "overdue " + settled.map { $0.publish.routingKey }.joined(separator: ",")
        case .reopenPublishChannel: "reopen publish channel"
        case .runAdmin(let command): "admin \(name(command))"
        case .failAdmin(let command, let error): "fail admin \(name(command)) \(error.code)"
        }
    }

    static func describe(_ actions: [Machine.Action]) -> [String] { actions.map { describe($0) } }

    @Test func connectsWhenDueStartsTheWantedConsumersThenCounts() {
        var machine = machine()
        _ = machine.consume(queue: "jobs", prefetch: 10, maxBodyBytes: 1024)
        #expect(machine.attemptDue(now: start - .seconds(1)) == nil)
        guard case .connect? = machine.attemptDue(now: start) else { Issue.record("no attempt"); return }
        let starts = Self.describe(machine.opened())
        #expect(starts == ["start jobs pushworker.1.1 10"])
        #expect(!machine.isConnected, "no delivery before the connection counts")
        #expect(Self.describe([machine.established()]) == ["connected 1"])
        #expect(machine.connectedGeneration == 1)
    }

    /// A lost connection fails its outstanding and held publishes and its held admin requests once,
    /// the next attempt goes to the other node after the backoff, and the consumers start again under
    /// fresh wire tags; acks of the old connection are dropped.
    @Test func aLostConnectionFailsWhatWasOutstandingAndReconnectsElsewhere() {
        var machine = connected(queues: ["jobs"])
        let firstNode = machine.rotation.current
        #expect(Self.describe([machine.delivered(channel: ConnectionChannels.consume, wireTag: "pushworker.1.1", deliveryTag: 1)]) == ["deliver 1.1 to 0"])
        #expect(Self.describe(machine.publish(Self.publish(1)).map { [$0] } ?? []) == ["write 1"])
        machine.written(Self.publish(1), returnKey: nil, now: start)
        // A retune in flight holds the admin request until its answer.
        #expect(Self.describe(machine.consume(queue: "jobs", prefetch: 20, maxBodyBytes: 1024).actions) == ["cancel pushworker.1.1"])
        #expect(machine.admin(Self.admin("count")).isEmpty)

        let lost = Self.describe(machine.lost(AMQPError(code: .connectionLost, message: "reset"), now: start + .seconds(1)))
        #expect(lost == ["complete 1:failed", "fail admin count connectionLost", "disconnected"])
        #expect(machine.rotation.current != firstNode)
        let reconnectAt = machine.reconnectAt
        #expect(reconnectAt.map { $0 >= start + .seconds(1) + .milliseconds(50) && $0 <= start + .seconds(1) + .milliseconds(100) } == true)

        // Commands while disconnected: publishes and requests fail at once, acks are moot.
        #expect(Self.describe(machine.publish(Self.publish(2)).map { [$0] } ?? []) == ["complete 2:failed"])
        #expect(Self.describe(machine.admin(Self.admin("purge"))) == ["fail admin purge connectionLost"])
        let staleAck = Self.describe(machine.settle(AMQPDeliveryTag(connectionGeneration: 1, value: 1), multiple: false, requeue: nil, now: start))
        #expect(staleAck == ["ignore 1 earlierConnection"])

        guard case .connect? = machine.attemptDue(now: reconnectAt ?? start) else { Issue.record("no second attempt"); return }
        #expect(Self.describe(machine.opened()) == ["start jobs pushworker.1.2 20"], "the newest prefetch, a fresh wire tag")
        #expect(Self.describe([machine.established()]) == ["connected 2"])
        let oldGeneration = Self.describe(machine.settle(AMQPDeliveryTag(connectionGeneration: 1, value: 1), multiple: false, requeue: false, now: start))
        #expect(oldGeneration == ["ignore 1 earlierConnection"])
    }

    /// A stop while disconnected is remembered: the next connection starts no consumer.
    @Test func aCancelDuringReconnectStartsNothingOnTheNextConnection() {
        var machine = connected(queues: ["jobs"])
        _ = machine.lost(AMQPError(code: .connectionLost, message: "reset"), now: start)
        #expect(machine.stopConsuming().isEmpty)
        guard case .connect? = machine.attemptDue(now: machine.reconnectAt ?? start) else { Issue.record("no attempt"); return }
        #expect(machine.opened().isEmpty)
        _ = machine.established()
        // Consuming again starts it at once, as one consumer.
        #expect(Self.describe(machine.consume(queue: "jobs", prefetch: 10, maxBodyBytes: 1024).actions) == ["start jobs pushworker.1.2 10"])
    }

    /// The commands of a batch after the one that broke the connection: each publish and request is
    /// answered once, a consume takes effect on the next connection.
    @Test func theRestOfABrokenBatchIsAnsweredWithoutTheConnection() {
        var machine = connected()
        #expect(Self.describe(machine.publish(Self.publish(1)).map { [$0] } ?? []) == ["write 1"])
        machine.written(Self.publish(1), returnKey: nil, now: start)
        // The admin request of the batch broke the connection.
        #expect(Self.describe(machine.admin(Self.admin("declare"))) == ["flush", "admin declare"])
        let lost = Self.describe(machine.lost(AMQPError(code: .connectionLost, message: "503"), now: start))
        #expect(lost == ["complete 1:failed", "disconnected"])
        #expect(Self.describe(machine.publish(Self.publish(3)).map { [$0] } ?? []) == ["complete 3:failed"])
        let consume = machine.consume(queue: "later", prefetch: 5, maxBodyBytes: 1024)
        #expect(consume.consumer == 0 && consume.actions.isEmpty)
        #expect(Self.describe(machine.publish(Self.publish(5)).map { [$0] } ?? []) == ["complete 5:failed"])
        guard case .connect? = machine.attemptDue(now: machine.reconnectAt ?? start) else { Issue.record("no attempt"); return }
        #expect(Self.describe(machine.opened()) == ["start later pushworker.1.1 5"])
    }

    /// Two consumers: each delivery reaches its own consumer; a retune of one cancels it while the
    /// other keeps delivering, deliveries sent before the cancel-ok still reach it, and it starts
    /// again with the new prefetch on the cancel-ok. Acks wait for at most half of their own consumer's prefetch.
    @Test func twoConsumersRetuneOneWhileTheOtherDelivers() {
        var machine = connected(queues: ["a", "b"], prefetch: 8)
        let first = Self.describe([machine.delivered(channel: ConnectionChannels.consume, wireTag: "pushworker.1.1", deliveryTag: 1)])
        let second = Self.describe([machine.delivered(channel: ConnectionChannels.consume, wireTag: "pushworker.2.2", deliveryTag: 2)])
        #expect(first == ["deliver 1.1 to 0"] && second == ["deliver 1.2 to 1"])

        #expect(Self.describe(machine.consume(queue: "a", prefetch: 4, maxBodyBytes: 1024).actions) == ["cancel pushworker.1.1"])
        let inFlight = Self.describe([machine.delivered(channel: ConnectionChannels.consume, wireTag: "pushworker.1.1", deliveryTag: 3)])
        let other = Self.describe([machine.delivered(channel: ConnectionChannels.consume, wireTag: "pushworker.2.2", deliveryTag: 4)])
        #expect(inFlight == ["deliver 1.3 to 0"] && other == ["deliver 1.4 to 1"])
        #expect(machine.consumers.activePrefetches == [4, 8], "a prefetch on its way down applies at once")
        let unknown = Self.describe([machine.delivered(channel: ConnectionChannels.consume, wireTag: "someone.else", deliveryTag: 5)])
        #expect(unknown == ["requeue 5"])

        #expect(Self.describe(machine.cancelOk(channel: ConnectionChannels.consume, wireTag: "pushworker.1.1")) == ["start a pushworker.1.3 4"])
        #expect(Self.describe(machine.consumeOk(channel: ConnectionChannels.consume, wireTag: "pushworker.1.3")) == ["report consumerStarted(queue: \"a\")"])

        // One ack each is below half of either prefetch: they wait for the ack delay.
        #expect(machine.settle(AMQPDeliveryTag(connectionGeneration: 1, value: 2), multiple: false, requeue: nil, now: start).isEmpty)
        #expect(machine.settle(AMQPDeliveryTag(connectionGeneration: 1, value: 3), multiple: false, requeue: nil, now: start).isEmpty)
        #expect(Self.describe(machine.turnEnded(idle: false, hasBufferedFrames: true, now: start)) == ["flush"])
        // A second ack of `a`'s deliveries is half of its prefetch of 4: all go now, as one multiple.
        #expect(machine.settle(AMQPDeliveryTag(connectionGeneration: 1, value: 1), multiple: false, requeue: nil, now: start).isEmpty)
        let turn = Self.describe(machine.turnEnded(idle: false, hasBufferedFrames: true, now: start))
        #expect(turn == ["acks 3+", "flush"])
    }

    /// A pause while a retune's cancel is in flight: no second cancel; the admin request asked
    /// meanwhile waits for the cancel-ok, then runs after the pending acks, and the consumer stays stopped.
    @Test func aPauseDuringACancelHoldsTheAdminRequestUntilTheCancelOk() {
        var machine = connected(queues: ["jobs"])
        _ = machine.delivered(channel: ConnectionChannels.consume, wireTag: "pushworker.1.1", deliveryTag: 1)
        #expect(Self.describe(machine.consume(queue: "jobs", prefetch: 20, maxBodyBytes: 1024).actions) == ["cancel pushworker.1.1"])
        #expect(Self.describe(machine.stopConsuming()) == ["flush"], "no second cancel")
        #expect(machine.admin(Self.admin("consumer count")).isEmpty, "held while the cancel is in flight")
        _ = machine.settle(AMQPDeliveryTag(connectionGeneration: 1, value: 1), multiple: false, requeue: nil, now: start)
        let answer = Self.describe(machine.cancelOk(channel: ConnectionChannels.consume, wireTag: "pushworker.1.1"))
        #expect(answer == ["acks 1", "flush", "admin consumer count"])
    }

    /// connection.blocked holds publishes; unblocked writes them in order; a loss while blocked
    /// fails them once.
    @Test func publishesHeldWhileBlockedAreWrittenInOrderOrFailedOnce() {
        var machine = connected()
        #expect(Self.describe(machine.blocked(reason: "low on memory")) == ["report blocked(reason: \"low on memory\")"])
        #expect(machine.publish(Self.publish(1)) == nil && machine.publish(Self.publish(2)) == nil)
        #expect(Self.describe(machine.unblocked(now: start)) == ["report unblocked", "write 1", "write 2"])
        _ = machine.blocked(reason: "disk")
        #expect(machine.publish(Self.publish(3)) == nil)
        let lost = Self.describe(machine.lost(AMQPError(code: .connectionLost, message: "reset"), now: start))
        #expect(lost == ["complete 3:failed", "disconnected"])
    }

    /// Confirms: a multiple ack settles every publish up to it; a broker that confirms nothing for
    /// the timeout is dropped.
    @Test func confirmsSettlePublishesAndASilentBrokerIsDropped() {
        var machine = connected()
        for id in 1...3 {
            _ = machine.publish(Self.publish(id))
            machine.written(Self.publish(id), returnKey: nil, now: start)
        }
        let acked = machine.confirmed(channel: ConnectionChannels.publish, deliveryTag: 2, multiple: true, nacked: false, now: start)
        #expect(Self.describe(acked.map { [$0] } ?? []) == ["complete 1:ok,2:ok"])
        let silent = Self.describe(machine.turnEnded(idle: true, hasBufferedFrames: false, now: start + machine.timing.confirmTimeout))
        #expect(silent == ["drop timeout", "flush"])
    }

    /// A consume the broker refused (its queue does not exist) is reported and not retried on the
    /// next connection; the connection starts over.
    @Test func aRefusedConsumeIsReportedAndNotRetried() {
        var machine = machine()
        _ = machine.consume(queue: "missing", prefetch: 10, maxBodyBytes: 1024)
        _ = machine.attemptDue(now: start)
        _ = machine.opened()
        _ = machine.established()
        let closed = Self.describe(machine.channelClosed(channel: ConnectionChannels.consume,
                                                         error: AMQPError(code: .channelClosed, status: 404, message: "NOT_FOUND"),
                                                         causedByConsume: true))
        #expect(closed.count == 2 && closed.first?.hasPrefix("report consumeFailed(queue: \"missing\"") == true && closed.last == "drop channelClosed")
        _ = machine.lost(AMQPError(code: .channelClosed, message: "NOT_FOUND"), now: start)
        _ = machine.attemptDue(now: machine.reconnectAt ?? start)
        #expect(machine.opened().isEmpty)
    }

    /// The publish channel closed by the broker: what was in flight on it fails, and it reopens.
    @Test func aClosedPublishChannelFailsItsPublishesAndReopens() {
        var machine = connected()
        _ = machine.publish(Self.publish(1))
        machine.written(Self.publish(1), returnKey: nil, now: start)
        let closed = Self.describe(machine.channelClosed(channel: ConnectionChannels.publish,
                                                         error: AMQPError(code: .channelClosed, status: 404, message: "no exchange"),
                                                         causedByConsume: false))
        #expect(closed == ["complete 1:failed", "reopen publish channel"])
    }

    /// shutdown(): pending acks, then cancels; publishes and requests asked meanwhile fail; what
    /// is outstanding fails at the end, once.
    @Test func closingSendsTheLastAcksAndCancelsThenFailsWhatIsLeft() {
        var machine = connected(queues: ["jobs"])
        _ = machine.delivered(channel: ConnectionChannels.consume, wireTag: "pushworker.1.1", deliveryTag: 1)
        _ = machine.publish(Self.publish(7))
        machine.written(Self.publish(7), returnKey: nil, now: start)
        machine.stopRequested()
        #expect(machine.settle(AMQPDeliveryTag(connectionGeneration: 1, value: 1), multiple: false, requeue: nil, now: start).isEmpty)
        #expect(Self.describe(machine.publish(Self.publish(8)).map { [$0] } ?? []) == ["complete 8:failed"])
        #expect(Self.describe(machine.admin(Self.admin("late"))) == ["fail admin late shutdown"])
        #expect(Self.describe(machine.closingWrites()) == ["acks 1", "flush", "cancel pushworker.1.1"])
        #expect(Self.describe(machine.closed(AMQPError(code: .shutdown, message: "client was shut down"))) == ["complete 7:failed"])
        #expect(machine.closed(AMQPError(code: .shutdown, message: "again")).isEmpty)
    }

    /// A failed attempt backs off exponentially and rotates; a success resets the backoff.
    @Test func failedAttemptsBackOffAndRotate() {
        var machine = machine()
        var now = start
        var delays: [Duration] = []
        var nodes: [Int] = []
        for _ in 0..<4 {
            guard case .connect(let node)? = machine.attemptDue(now: now) else { Issue.record("no attempt"); return }
            nodes.append(node.port)
            guard case .reportConnectFailed(_, let delay) = machine.connectFailed(AMQPError(code: .connectionLost, message: "refused"), now: now) else {
                Issue.record("no report"); return
            }
            delays.append(delay)
            now = machine.reconnectAt ?? now
        }
        #expect(nodes[0] != nodes[1] && nodes[0] == nodes[2], "every node in turn: \(nodes)")
        #expect(delays[3] > delays[0], "backoff grows: \(delays)")
        _ = machine.attemptDue(now: now)
        _ = machine.opened()
        _ = machine.established()
        guard case .reportDisconnected(_, let afterSuccess) = machine.lost(AMQPError(code: .connectionLost, message: "x"), now: now).last else {
            Issue.record("no report"); return
        }
        #expect(afterSuccess <= .milliseconds(100), "reset after a success: \(afterSuccess)")
    }
}
