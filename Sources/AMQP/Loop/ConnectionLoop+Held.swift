/// Held messages (`AMQPClient+Held`) on the admin channel (owner thread only).
extension ConnectionLoop {
    func held(_ request: HeldRequest, on connection: AMQPConnection) throws(AMQPError) -> AdminResult {
        switch request {
        case .hold(let queue):
            try ensureAdminChannel(connection)
            let delivery = try connection.get(channel: Self.adminChannel, queue: queue, generation: generation, autoAck: false)
            return .held(delivery.map { AMQPHeldMessage(delivery: $0, channelOpening: adminChannelOpenings) })
        case .ack(let message):
            // Acked only on the channel that took it: a tag of an earlier opening or connection
            // would settle another message, or close the channel (406 unknown delivery tag).
            guard message.delivery.tag.connectionGeneration == generation, message.channelOpening == adminChannelOpenings,
                  connection.openChannels.contains(Self.adminChannel) else {
                throw AMQPError(code: .channelClosed, message: "the held message went back to its queue when its channel closed; it was not acked")
            }
            try connection.ack(channel: Self.adminChannel, deliveryTag: message.delivery.tag.value, multiple: false)
            return .done
        case .release:
            if connection.openChannels.contains(Self.adminChannel) {
                try connection.closeChannel(Self.adminChannel)
            }
            return .done
        }
    }
}
