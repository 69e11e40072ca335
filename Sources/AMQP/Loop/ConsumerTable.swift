import PushCore

/// The connection's consumers by tag, in the order they were added (tags are never removed:
/// a stopped consumer's tag is given back to the next consumer of its queue). A connection has one
/// or a few and looks one up twice per delivery (its body limit, then its handler), hence a
/// `LengthFirstNames` scan rather than a dictionary.
///
/// The broker knows a consumer by a wire tag: its tag and the number of the basic.consume, fresh
/// for each one ("pushworker.1.7"). RabbitMQ 3.10.8 crashes the channel when a quorum queue's
/// consumer is cancelled and started again under the same tag while deliveries of the first are
/// in flight (the crash: docs/evidence/code-measurements.md#consumer-wire-tags).
struct ConsumerTable {
    private var tagList = LengthFirstNames()
    private var consumers: [Consumer] = [] {
        didSet { activePrefetches = consumers.map(Self.activePrefetch) }
    }
    /// Each consumer's prefetch that limits the broker now or soon, by its index: the smaller of
    /// the one it runs with and the one it will start with (`Int.max`: unlimited, or not
    /// consuming). A consumer's acks are held up to half of it, so a prefetch on its way down
    /// applies at once and one on its way up only once it runs. Per consumer, not the smallest of
    /// all: a small window (the bulk lane's) must not send a large one's acks one by one
    /// (docs/evidence/PERFORMANCE.md, "Re-run at f9d252e"). Kept current on every change, as it
    /// is read on every turn of the loop.
    private(set) var activePrefetches: [Int] = []
    /// Tags whose basic.consume was sent and not answered, oldest first (`consumeRefused`).
    var unansweredConsumes: [String] = []
    /// basic.consume methods sent, numbering the wire tags. UInt64 on purpose: one per start,
    /// restart or reconnect, never near its end.
    var consumesSent: UInt64 = 0

    var tags: [String] { tagList.names }
    var count: Int { tagList.count }
    var values: [Consumer] { consumers }

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
    func deliveryConsumer(wireTag: String) -> Consumer? {
        deliveryConsumerIndex(wireTag: wireTag).map { consumers[$0] }
    }

    /// Where `deliveryConsumer(wireTag:)` is in the table (`index(of:)`).
    func deliveryConsumerIndex(wireTag: String) -> Int? {
        for (index, consumer) in consumers.enumerated() where consumer.wireTag == wireTag { return index }
        guard let dot = wireTag.utf8.lastIndex(of: UInt8(ascii: ".")) else { return nil }
        let tag = String(wireTag[..<dot])
        guard let number = UInt64(wireTag[wireTag.index(after: dot)...]), number <= consumesSent else { return nil }
        return tagList.index(of: tag)
    }

    /// The consumer's place in the table: tags are added in order and never removed, so it is
    /// stable for the client's life.
    func index(of tag: String) -> Int? {
        tagList.index(of: tag)
    }

    subscript(tag: String) -> Consumer? {
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

    private static func activePrefetch(of consumer: Consumer) -> Int {
        var smallest = Int.max
        func limit(_ prefetch: UInt16) {
            if prefetch > 0 { smallest = min(smallest, Int(prefetch)) }
        }
        switch consumer.atBroker {
        case .starting(let prefetch, _), .consuming(let prefetch), .cancelling(let prefetch):
            limit(prefetch)
            if consumer.wanted { limit(consumer.prefetch) }
        case .none:
            if consumer.wanted { limit(consumer.prefetch) }
        }
        return smallest
    }
}
