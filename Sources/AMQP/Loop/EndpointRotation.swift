/// Which broker node the next connection goes to. The nodes are shuffled once per client, so a
/// fleet started with one URL spreads over the cluster instead of crowding its first node; a node
/// whose connection failed or was lost is left for the next, so every node is tried in turn (the
/// reconnect backoff still applies between tries).
struct EndpointRotation {
    private(set) var order: [AMQPEndpoint]
    private(set) var position = 0

    init<Generator: RandomNumberGenerator>(_ endpoints: [AMQPEndpoint], generator: inout Generator) {
        precondition(!endpoints.isEmpty, "an AMQP URL names at least one node")
        order = endpoints.shuffled(using: &generator)
    }

    init(_ endpoints: [AMQPEndpoint]) {
        var generator = SystemRandomNumberGenerator()
        self.init(endpoints, generator: &generator)
    }

    var current: AMQPEndpoint { order[position] }

    /// Connecting to `current` failed, or its connection was lost.
    mutating func failed() {
        position = (position + 1) % order.count
    }
}
