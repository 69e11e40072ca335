import AMQP
import ArgumentParser
import Foundation
import Logging
import PushCore

struct SendCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "send",
        abstract: "Publish one job to push.jobs (confirmed), as any application would.")

    @OptionGroup var connection: ConnectionOptions
    @Option(name: .customLong("token"), help: "A device token (repeatable).") var tokens: [String] = []
    @Option(name: .customLong("group"), help: "A group name (repeatable).") var groups: [String] = []
    @Option(help: "The app the job is for.") var app: String = Env["app"] ?? "default"
    @Option(help: "Alert text (builds {\"aps\":{\"alert\":TEXT}}).") var alert: String?
    @Option(help: "The whole APNs payload as JSON (instead of --alert).") var payload: String?
    @Option(help: "apns-push-type.") var pushType: String?
    @Option(help: "10, 5 or 1.") var priority: Int?
    @Option(help: "UNIX seconds, or +N seconds from now.") var expiration: String?
    @Option(help: "apns-collapse-id.") var collapseID: String?
    @Option(help: "Job id (default: generated).") var id: String?
    @Option(help: "Job queue name.") var jobQueue: String = Env["job-queue"] ?? "push.jobs"

    func run() async throws {
        guard !tokens.isEmpty || !groups.isEmpty else { throw ValidationError("give --token or --group") }
        if let payload { return try await publish(payloadJSON: payload) }
        guard let alert else { throw ValidationError("give --alert TEXT or --payload JSON") }
        var aps = JSONWriter()
        aps.field("alert", alert)
        try await publish(payloadJSON: "{\"aps\":" + String(decoding: aps.finish(), as: UTF8.self) + "}")
    }

    private func publish(payloadJSON: String) async throws {
        var writer = JSONWriter()
        let jobID = id ?? UUID().uuidString.lowercased()
        writer.field("id", jobID)
        writer.field("app", app)
        if !tokens.isEmpty { writer.field("tokens", strings: tokens) }
        if !groups.isEmpty { writer.field("groups", strings: groups) }
        if let pushType { writer.field("push_type", pushType) }
        if let priority { writer.field("priority", priority) }
        if let expiration {
            if expiration.hasPrefix("+") { writer.field("expiration", expiration) } else if let seconds = Int(expiration) { writer.field("expiration", seconds) } else {
                throw ValidationError("--expiration must be UNIX seconds or +N")
            }
        }
        if let collapseID { writer.field("collapse_id", collapseID) }
        writer.rawField("payload", payloadJSON)
        let body = writer.finish()
        let amqp = AMQPClient(configuration: connection.amqpConfiguration(name: "pushworker-send"), topology: [.queue(name: jobQueue)],
                              logger: Logger(label: "pushworker.send"))
        amqp.start()
        do {
            try await amqp.waitUntilConnected(timeout: .seconds(10))
            var properties = AMQPProperties()
            properties.contentType = "application/json"
            properties.messageID = jobID
            // Mandatory: a queue that is gone (deleted after the declare) fails the command instead of
            // the broker confirming a message it dropped.
            try await amqp.publish(exchange: "", routingKey: jobQueue, body: body, properties: properties, mandatory: true)
        } catch {
            await amqp.shutdown()
            throw error
        }
        await amqp.shutdown()
        print("published job \(jobID) to \(jobQueue)")
    }
}
