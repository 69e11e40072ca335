import PushCore

/// The connection's consumers by tag, in the order they were added (tags are never removed:
/// a stopped consumer's tag is given back to the next consumer of its queue). A connection has one
/// or a few and looks one up twice per delivery (its body limit, then its handler), hence a
/// `LengthFirstNames` scan rather than a dictionary.
///
/// The broker knows a consumer by a wire tag: its tag and the number of the basic.consume, fresh
/// for each one ("pushworker.1.7"). RabbitMQ 3.10.8 (Debian 12's) crashes the channel when a quorum
/// queue's consumer is cancelled and started again under the same tag while deliveries of the
/// first are in flight (`function_clause` in `rabbit_channel:handle_deliver0`, the connection closed
/// with 541 INTERNAL_ERROR, every unacked job handed back); docs/evidence/rabbitmq-cluster.md has the log.
struct ConsumerTable {
    private var tagList = LengthFirstNames()
    private var consumers: [ConnectionLoop.Consumer] = []
    /// Tags whose basic.consume was sent and not answered, oldest first (`consumeRefused`).
    var unansweredConsumes: [String] = []
    /// basic.consume methods sent, numbering the wire tags. UInt64 on purpose: one per start,
    /// restart or reconnect, never near its end.
    var consumesSent: UInt64 = 0

    var tags: [String] { tagList.names }
    var count: Int { tagList.count }
    var values: [ConnectionLoop.Consumer] { consumers }

    /// The consumer's tag for the wire tag the broker runs it under now; nil for an earlier
    /// consume's wire tag (a stale consume-ok, cancel-ok or cancel) or one not ours.
    func tag(forWireTag wireTag: String) -> String? {
        for (index, consumer) in consumers.enumerated() where consumer.wireTag == wireTag {
            return tagList.names[index]
        }
        return nil
    }

    /// The consumer a delivery goes to: the one running under `wireTag`, or the consumer whose
    /// earlier consume it was (deliveries sent before a cancel-ok, still valid on the channel).
    func deliveryConsumer(wireTag: String) -> ConnectionLoop.Consumer? {
        for consumer in consumers where consumer.wireTag == wireTag { return consumer }
        guard let dot = wireTag.utf8.lastIndex(of: UInt8(ascii: ".")) else { return nil }
        let tag = String(wireTag[..<dot])
        guard let number = UInt64(wireTag[wireTag.index(after: dot)...]), number <= consumesSent else { return nil }
        return self[tag]
    }

    subscript(tag: String) -> ConnectionLoop.Consumer? {
        get { tagList.index(of: tag).map { consumers[$0] } }
        set {
            switch (tagList.index(of: tag), newValue) {
            case let (index?, consumer?): consumers[index] = consumer
            case let (index?, nil):
                tagList.remove(at: index)
                consumers.remove(at: index)
            case let (nil, consumer?):
                tagList.append(tag)
                consumers.append(consumer)
            case (nil, nil): break
            }
        }
    }
}
