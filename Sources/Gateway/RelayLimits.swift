/// How many posts the relay (`/relay-to/…`, no key) takes: a token bucket per client
/// (`RelayClient`) and one per relay app, so that no one sender, and no flood from many, fills
/// the job queue every app shares.
///
/// The defaults are sized on Mastodon, the relay's main sender (docs/reference/relay.md, "Limits"): one post
/// per notification per subscribed device from its Sidekiq `push` queue, whose default 25 threads
/// make at most ~250 a second to one relay, in bursts (a poll's end notifies every voter), and one
/// app's share is far less (an estimate: tens a second on the largest instances). On 429 Mastodon keeps the
/// subscription and Sidekiq retries the notification 5 times over several minutes (any other 4xx
/// deletes the subscription). So an address may post 50 a second with bursts of 500 (10 s at that
/// rate), its excess taken on Sidekiq's retries (the bucket is full again 10 s after it emptied;
/// the first retry comes at least 15 s after a 429). An app takes 500 a second, bursts of 5,000:
/// many instances' peaks at once, yet a bound on what anyone reaching the relay puts in the queue.
public struct RelayLimits: Sendable, Equatable {
    public struct Rate: Sendable, Equatable {
        public var requestsPerSecond: Int
        public var burst: Int

        public init(requestsPerSecond: Int, burst: Int) {
            self.requestsPerSecond = requestsPerSecond
            self.burst = burst
        }

        /// A rate given without its burst gets 10 seconds' worth.
        public init(requestsPerSecond: Int) {
            self.init(requestsPerSecond: requestsPerSecond, burst: requestsPerSecond * 10)
        }
    }

    public var perAddress = Rate(requestsPerSecond: 50)
    public var perApp = Rate(requestsPerSecond: 500)
    /// The most clients whose buckets are kept (~100 bytes each). Past it, full buckets are dropped
    /// (a new one would decide the same), then the least recently seen: such a client starts again
    /// with a full burst, and the per-app bucket still bounds what all of them together send.
    public var maxAddresses = 100_000

    public init() {}
}
