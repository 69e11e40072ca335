/// Sends one command to the node it belongs to. Implementations keep their connections and are
/// touched only on RedisClient's serial queue (hiredis contexts are not thread-safe).
protocol CommandRouter: AnyObject {
    /// An error reply comes back as `.error` (after redirects were followed); failing to reach a
    /// node that can answer by `deadline` throws `.connection`.
    func run(_ arguments: [String], deadline: ContinuousClock.Instant) throws(RedisError) -> RedisReply
    /// Several commands in one round trip, all for the same key (so the same node); the replies
    /// in order. A command retried after a broken connection may have run once already.
    func runPipeline(_ commands: [[String]], deadline: ContinuousClock.Instant) throws(RedisError) -> [RedisReply]
}
