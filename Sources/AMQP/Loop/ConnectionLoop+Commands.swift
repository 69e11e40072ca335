/// Commands from the callers, fed to the machine (owner thread only).
extension ConnectionLoop {
    /// Feeds one command to the machine and performs what it asks. A single ack asks nothing: it
    /// waits in the machine to go out with others.
    func handle(_ command: ClientCommand, on connection: AMQPConnection) throws(AMQPError) {
        switch command {
        case .ack(let tag, let multiple):
            try perform(machine.settle(tag, multiple: multiple, requeue: nil, now: .now), on: connection)
        case .nack(let tag, let requeue, let multiple):
            try perform(machine.settle(tag, multiple: multiple, requeue: requeue, now: .now), on: connection)
        case .publish(let request):
            if let action = machine.publish(request) { try perform(action, on: connection) }
        case .consume(let queue, let prefetch, let maxBodyBytes, let bodyRoom, let handler):
            let (index, actions) = machine.consume(queue: queue, prefetch: prefetch, maxBodyBytes: maxBodyBytes)
            keep(ConsumerCallbacks(bodyRoom: bodyRoom, handler: handler), at: index)
            try perform(actions, on: connection)
        case .stopConsuming:
            try perform(machine.stopConsuming(), on: connection)
        case .admin(let request, let completion):
            try perform(machine.admin(AdminCommand(request: request, completion: completion)), on: connection)
        }
    }

    /// The same without a connection: the machine fails publishes and requests at once (waiting for
    /// a reconnect could take arbitrarily long), keeps consumer changes for the next connection and
    /// drops acks (the broker requeued their deliveries).
    func handleWithoutConnection(_ command: ClientCommand) {
        switch command {
        case .ack(let tag, let multiple):
            performWithoutConnection(machine.settle(tag, multiple: multiple, requeue: nil, now: .now))
        case .nack(let tag, let requeue, let multiple):
            performWithoutConnection(machine.settle(tag, multiple: multiple, requeue: requeue, now: .now))
        case .publish(let request):
            if let action = machine.publish(request) { performWithoutConnection([action]) }
        case .consume(let queue, let prefetch, let maxBodyBytes, let bodyRoom, let handler):
            let (index, actions) = machine.consume(queue: queue, prefetch: prefetch, maxBodyBytes: maxBodyBytes)
            keep(ConsumerCallbacks(bodyRoom: bodyRoom, handler: handler), at: index)
            performWithoutConnection(actions)
        case .stopConsuming:
            performWithoutConnection(machine.stopConsuming())
        case .admin(let request, let completion):
            performWithoutConnection(machine.admin(AdminCommand(request: request, completion: completion)))
        }
    }

    /// The consumer's handler and body room, at its index in the machine's table.
    private func keep(_ callbacks: ConsumerCallbacks, at index: Int) {
        if index < consumerCallbacks.count {
            consumerCallbacks[index] = callbacks
        } else {
            precondition(index == consumerCallbacks.count, "consumers are added one at a time")
            consumerCallbacks.append(callbacks)
        }
    }
}
