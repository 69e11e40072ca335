/// Broker operations on the admin channel (owner thread only): the topology, and the requests of
/// `AdminRequest`, which the machine lets run (`ConnectionMachine.admin`).
extension ConnectionLoop {
    func declare(_ declarations: [AMQPDeclaration], on connection: AMQPConnection) throws(AMQPError) {
        try ensureAdminChannel(connection)
        for declaration in declarations {
            switch declaration {
            case .exchange(let name, let type, let durable, let arguments):
                do {
                    try connection.declareExchange(channel: ConnectionChannels.admin, name: name, type: type, durable: durable, arguments: arguments)
                } catch where error.status == 406 && !arguments.isEmpty && !connection.isBroken {
                    // PRECONDITION_FAILED: it exists with other arguments (declared by an older
                    // version or by hand). Keep it; say what it lacks.
                    logger.warning("AMQP exchange exists with other arguments; kept as it is", metadata: [
                        LogKeys.exchange: "\(name)", LogKeys.arguments: "\(arguments.keys.sorted())", LogKeys.error: "\(error)",
                    ])
                    try ensureAdminChannel(connection)
                }
            case .queue(let name, let durable, let arguments):
                do {
                    try connection.declareQueue(channel: ConnectionChannels.admin, name: name, passive: false, durable: durable, arguments: arguments)
                } catch where error.status == 406 {
                    throw AMQPError(code: error.code, status: error.status, message: error.message
                        + " (queue \(name) exists with another type or other arguments: every declarer must declare it the same way, e.g. the same --queue-type, or delete it)")
                }
            case .existingQueue(let name):
                _ = try connection.declareQueue(channel: ConnectionChannels.admin, name: name, passive: true, durable: false, arguments: [:])
            case .binding(let queue, let exchange, let routingKey):
                try connection.bind(channel: ConnectionChannels.admin, queue: queue, exchange: exchange, routingKey: routingKey)
            }
        }
    }

    func ensureAdminChannel(_ connection: AMQPConnection) throws(AMQPError) {
        // A failed admin RPC closes only this channel; reopen it on demand.
        if !connection.openChannels.contains(ConnectionChannels.admin) {
            try connection.openChannel(ConnectionChannels.admin)
            machine.adminChannelOpened()
        }
    }

    func admin(_ request: AdminRequest, on connection: AMQPConnection) -> Result<AdminResult, AMQPError> {
        do {
            switch request {
            case .declare(let declarations):
                try declare(declarations, on: connection)
                for declaration in declarations where !topology.contains(declaration) {
                    topology.append(declaration)
                }
                return .success(.done)
            case .get(let queue):
                try ensureAdminChannel(connection)
                return .success(.delivery(try connection.get(channel: ConnectionChannels.admin, queue: queue, generation: machine.connectedGeneration ?? 0)))
            case .messageCount(let queue):
                try ensureAdminChannel(connection)
                return .success(.count(try connection.declareQueue(
                    channel: ConnectionChannels.admin, name: queue, passive: true, durable: false, arguments: [:]).messages))
            case .consumerCount(let queue):
                try ensureAdminChannel(connection)
                return .success(.count(try connection.declareQueue(
                    channel: ConnectionChannels.admin, name: queue, passive: true, durable: false, arguments: [:]).consumers))
            case .purge(let queue):
                try ensureAdminChannel(connection)
                try connection.purge(channel: ConnectionChannels.admin, queue: queue)
                return .success(.done)
            case .deleteQueue(let queue):
                try ensureAdminChannel(connection)
                try connection.deleteQueue(channel: ConnectionChannels.admin, queue: queue)
                return .success(.done)
            case .deleteExchange(let exchange):
                try ensureAdminChannel(connection)
                try connection.deleteExchange(channel: ConnectionChannels.admin, exchange: exchange)
                return .success(.done)
            case .held(let request):
                return .success(try held(request, on: connection))
            case .renewPublishChannel:
                logger.warning("AMQP publish channel renewed after repeated nacks")
                try perform(machine.publishChannelRenewed(), on: connection)
                return .success(.done)
            }
        } catch {
            return .failure(error)
        }
    }
}
