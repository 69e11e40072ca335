extension ConsumerTable {
    /// A consumer as the connection's decisions see it. Its handler and body room are the loop's
    /// (`ConnectionLoop.ConsumerCallbacks`, at the same index), so the table is a plain value.
    struct Consumer: Equatable {
        let queue: String
        let prefetch: UInt16
        let maxBodyBytes: Int
        /// False after stopConsuming(), a server cancel or a refused consume: not restarted on
        /// reconnect, but its in-flight deliveries still reach the handler.
        var wanted: Bool
        /// What the broker runs for this tag on the current connection.
        var atBroker: AtBroker = .none
        /// The tag the broker knows this consumer by now: a fresh one per basic.consume
        /// (`ConsumerTable.starting`); nil until the first.
        var wireTag: String?

        enum AtBroker: Equatable {
            case none
            /// basic.qos and basic.consume sent, the consume-ok not yet read. `thenCancel`: a stop or
            /// retune came meanwhile; the cancel goes out on the consume-ok (RabbitMQ's channel
            /// crashes, `badkey` in `consumer_monitor`, on a cancel of a consume it has not answered).
            case starting(prefetch: UInt16, thenCancel: Bool = false)
            case consuming(prefetch: UInt16)
            /// basic.cancel sent, its cancel-ok not yet read: deliveries still arrive.
            case cancelling(prefetch: UInt16)

            var cancelSent: AtBroker {
                switch self {
                case .starting(let prefetch, _): .starting(prefetch: prefetch, thenCancel: true)
                case .consuming(let prefetch), .cancelling(let prefetch): .cancelling(prefetch: prefetch)
                case .none: .none
                }
            }
        }
    }
}
