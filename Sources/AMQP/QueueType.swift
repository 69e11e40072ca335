/// How RabbitMQ keeps a queue. A classic queue lives on one node: it is lost with that node's
/// disk, and waits while the node is down. A quorum queue (RabbitMQ 3.8+) is replicated by Raft over
/// the cluster's nodes and survives the loss of a minority of them; it costs more broker CPU per
/// message, and RabbitMQ refuses to declare a queue again with another type or other arguments
/// (406 PRECONDITION_FAILED).
public enum QueueType: String, Sendable, CaseIterable, CustomStringConvertible {
    case classic
    case quorum

    public var description: String { rawValue }
}
