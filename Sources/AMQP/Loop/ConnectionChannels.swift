/// The channels of a connection, each with one job, so a channel error in one (a 404 from a
/// passive declare, a publish to a missing exchange) never disturbs the others.
enum ConnectionChannels {
    /// Consumes with manual acks.
    static let consume: UInt16 = 1
    /// Publishes with publisher confirms.
    static let publish: UInt16 = 2
    /// Declarations and other synchronous operations.
    static let admin: UInt16 = 3
}
