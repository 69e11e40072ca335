/// A message taken with basic.get and not acked yet (`AMQPClient.hold(queue:)`). The broker keeps
/// it out of the queue until `acknowledge` removes it for good, or gives it back to its place in
/// the queue when `releaseHeld()` closes the admin channel, the channel closes for any other
/// reason, or the connection ends (a crash included): nothing held is ever lost.
public struct AMQPHeldMessage: Sendable {
    public let delivery: AMQPDelivery
    /// Which opening of the admin channel took it: its delivery tag means nothing on another one
    /// (tags start again at 1), so an ack after a reopening is refused instead of settling another message.
    let channelOpening: UInt64

    init(delivery: AMQPDelivery, channelOpening: UInt64) {
        self.delivery = delivery
        self.channelOpening = channelOpening
    }
}
