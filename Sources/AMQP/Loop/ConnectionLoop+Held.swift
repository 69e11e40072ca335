/// Held messages (`AMQPClient+Held`) on the admin channel (owner thread only).
extension ConnectionLoop {
    func held(_ request: HeldRequest, on connection: AMQPConnection) throws(AMQPError) -> AdminResult {
        switch request {
        case .hold(let queue):
            try ensureAdminChannel(connection)
            let delivery = try connection.get(channel: ConnectionChannels.admin, queue: queue, generation: machine.connectedGeneration ?? 0, autoAck: false)
            return .held(delivery.map { AMQPHeldMessage(delivery: $0, channelOpening: machine.adminChannelOpenings) })
        case .ack(let message):
            // Acked only on the channel that took it: a tag of an earlier opening or connection
            // would settle another message, or close the channel (406 unknown delivery tag).
            guard message.delivery.tag.connectionGeneration == machine.connectedGeneration, message.channelOpening == machine.adminChannelOpenings,
                  connection.openChannels.contains(ConnectionChannels.admin) else {
                throw AMQPError(code: .channelClosed, message: "the held message went back to its queue when its channel closed; it was not acked")
            }
            try connection.ack(channel: ConnectionChannels.admin, deliveryTag: message.delivery.tag.value, multiple: false)
            return .done
        case .release:
            if connection.openChannels.contains(ConnectionChannels.admin) {
                try connection.closeChannel(ConnectionChannels.admin)
            }
            return .done
        }
    }
}
