import AMQP
import Foundation
import Logging
import NIOConcurrencyHelpers

/// Integration tests talk to the real broker; a missing broker fails them (never skips).
enum Broker {
    static var url: String {
        ProcessInfo.processInfo.environment["AMQP_URL"] ?? "amqp://guest:guest@127.0.0.1:5672/"
    }

    static func uniqueName(_ purpose: String) -> String {
        "pushworker-test.\(purpose).\(UUID().uuidString.prefix(8))"
    }

    static var logger: Logger {
        var logger = Logger(label: "amqp-test")
        logger.logLevel = ProcessInfo.processInfo.environment["AMQP_TEST_LOG"].flatMap(Logger.Level.init(rawValue:)) ?? .critical
        return logger
    }

    /// A started and connected client with a unique connection name (used to force-close it).
    static func connectedClient(
        topology: [AMQPDeclaration] = [],
        heartbeat: Int = 30,
        events: EventRecorder = EventRecorder()
    ) async throws -> AMQPClient {
        var configuration = AMQPConfiguration(url: url)
        configuration.heartbeat = heartbeat
        configuration.connectionName = uniqueName("connection")
        configuration.reconnectDelay = .milliseconds(100) ... .seconds(2)
        events.connectionName = configuration.connectionName
        let client = AMQPClient(configuration: configuration, topology: topology, logger: logger) { event in
            events.record(event)
        }
        client.start()
        do {
            try await client.waitUntilConnected(timeout: .seconds(10))
        } catch {
            await client.shutdown()
            throw error
        }
        return client
    }

    /// Closes only this client's connection from the broker side (other users share the broker).
    static func forceClose(connectionName: String) throws {
        let listing = try rabbitmqctl(["-q", "list_connections", "pid", "client_properties"])
        guard let line = listing.split(separator: "\n").first(where: { $0.contains(connectionName) }),
              let pid = line.split(separator: "\t").first
        else { throw TestFailure("connection \(connectionName) not found in:\n\(listing)") }
        _ = try rabbitmqctl(["close_connection", String(pid), "test"])
    }

    /// The node ops/services.sh starts for the broker's port (one name per port, so two can run).
    static var nodeName: String {
        let port = URLComponents(string: url)?.port ?? 5672
        return port == 5672 ? "pushworker@localhost" : "pushworker-\(port)@localhost"
    }

    static func rabbitmqctl(_ arguments: [String]) throws -> String {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/lib/rabbitmq/bin/rabbitmqctl")
        process.arguments = ["-n", nodeName] + arguments
        var environment = ProcessInfo.processInfo.environment
        // The node's Erlang cookie lives here (see ops/services.sh).
        environment["HOME"] = environment["PUSHWORKER_SERVICES_DIR"].map { $0 + "/rabbitmq" } ?? "/tmp/pushworker-services/rabbitmq"
        process.environment = environment
        let output = Pipe()
        process.standardOutput = output
        process.standardError = output
        try process.run()
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        let text = String(decoding: data, as: UTF8.self)
        guard process.terminationStatus == 0 else {
            throw TestFailure("rabbitmqctl \(arguments.joined(separator: " ")) failed: \(text)")
        }
        return text
    }

    /// Resident set size of this process in bytes.
    static func residentBytes() -> Int {
        guard let statm = try? String(contentsOfFile: "/proc/self/statm", encoding: .utf8) else { return 0 }
        let fields = statm.split(separator: " ")
        guard fields.count > 1, let pages = Int(fields[1]) else { return 0 }
        return pages * Int(sysconf(Int32(_SC_PAGESIZE)))
    }
}

struct TestFailure: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

final class EventRecorder: Sendable {
    private let state = NIOLockedValueBox<(events: [AMQPConnectionEvent], name: String)>(([], ""))

    var connectionName: String {
        get { state.withLockedValue { $0.name } }
        set { state.withLockedValue { $0.name = newValue } }
    }

    func record(_ event: AMQPConnectionEvent) {
        state.withLockedValue { $0.events.append(event) }
    }

    var events: [AMQPConnectionEvent] { state.withLockedValue { $0.events } }

    var disconnects: Int {
        events.filter { if case .disconnected = $0 { true } else { false } }.count
    }

    var connectedGenerations: [UInt64] {
        events.compactMap { if case .connected(let generation) = $0 { generation } else { nil } }
    }

    var cancelledQueues: [String] {
        events.compactMap { if case .consumerCancelledByServer(let queue) = $0 { queue } else { nil } }
    }
}

/// Collects deliveries from a consumer handler (which runs on the AMQP thread).
final class DeliveryCollector: Sendable {
    private let deliveries = NIOLockedValueBox<[AMQPDelivery]>([])
    private let counter = NIOLockedValueBox(0)
    private let keepBodies: Bool

    init(keepBodies: Bool = true) {
        self.keepBodies = keepBodies
    }

    func add(_ delivery: AMQPDelivery) {
        if keepBodies {
            deliveries.withLockedValue { $0.append(delivery) }
        }
        counter.withLockedValue { $0 += 1 }
    }

    var all: [AMQPDelivery] { deliveries.withLockedValue { $0 } }
    var count: Int { counter.withLockedValue { $0 } }

    /// Polls until `count` deliveries arrived; false on timeout.
    func wait(for count: Int, timeout: Duration = .seconds(20)) async -> Bool {
        let deadline = ContinuousClock.now + timeout
        while self.count < count {
            if ContinuousClock.now > deadline { return false }
            try? await Task.sleep(for: .milliseconds(10))
        }
        return true
    }
}

/// Polls a condition (event arrival etc.) until true or timeout.
func eventually(timeout: Duration = .seconds(15), _ condition: () -> Bool) async -> Bool {
    let deadline = ContinuousClock.now + timeout
    while !condition() {
        if ContinuousClock.now > deadline { return false }
        try? await Task.sleep(for: .milliseconds(20))
    }
    return true
}
