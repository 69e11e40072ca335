/// Reading a queue without consuming it, and moving messages out of it only once they are safe
/// elsewhere: basic.get without ack on the admin channel, acks there, and a channel close that
/// gives back what is still held. For operators' tools (`pushworker dead`), not the hot path:
/// each call is one round trip.
extension AMQPClient {
    /// basic.get without ack; nil when the queue has no ready message. The message stays held
    /// (invisible to other consumers) until `acknowledge` or `releaseHeld()`.
    public func hold(queue: String) async throws(AMQPError) -> AMQPHeldMessage? {
        guard case .held(let message) = try await admin(.held(.hold(queue: queue))) else { return nil }
        return message
    }

    /// Removes a held message from its queue for good (basic.ack). Throws `.channelClosed` when
    /// the message was already given back (the channel or connection closed since it was taken).
    public func acknowledge(_ message: AMQPHeldMessage) async throws(AMQPError) {
        _ = try await admin(.held(.ack(message)))
    }

    /// Gives every held message back to its place in its queue (channel.close; the next admin
    /// request opens the channel again), and returns once the broker confirmed the close: the
    /// acks sent before it have then been processed too.
    public func releaseHeld() async throws(AMQPError) {
        _ = try await admin(.held(.release))
    }
}
