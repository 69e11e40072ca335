import ArgumentParser
import Foundation
import Logging
import PushCore
import PushworkerClient

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
    @Flag(help: "Then print the job's events (subscribed before sending) until its job.completed or job.rejected.")
    var wait = false
    @Option(help: "With --wait: give up after this many seconds.") var waitSeconds: Int = 60
    @Option(help: "With --wait: the results exchange name.") var resultsExchange: String = Env["results-exchange"] ?? "push.results"

    func run() async throws {
        let job = try makeJob()
        let amqp = connection.amqpConfiguration(name: "pushworker-send")
        let client = PushworkerClient(configuration: .init(amqpURL: amqp.url, caFile: amqp.caFile, jobQueue: jobQueue,
                                                           resultsExchange: resultsExchange, connectionName: amqp.connectionName,
                                                           queueType: try connection.parsedQueueType() ?? .classic),
                                      logger: Logger(label: "pushworker.send"))
        do {
            // Subscribed first, so not even the first event can come before the queue is bound.
            let events = wait ? try await client.events(for: job.jobID) : nil
            try await client.send(job)
            print("published job \(job.id) to \(jobQueue)")
            if let events { try await printEvents(events) }
        } catch {
            await client.shutdown()
            throw error
        }
        await client.shutdown()
    }

    private func makeJob() throws -> PushworkerJob {
        guard !tokens.isEmpty || !groups.isEmpty else { throw ValidationError("give --token or --group") }
        var job = PushworkerJob(app: app, devices: tokens.map(PushworkerDevice.token), groups: groups,
                                platform: .apns(APNsPayload(), pushType: pushType.map(PushworkerJob.APNsPushType.init(rawValue:))))
        if let id { job.id = id }
        if let payload {
            guard case .object(let object) = try? JSONValue.parse(Array(payload.utf8)) else {
                throw ValidationError("--payload must be a JSON object")
            }
            job.rawPayload = object
        } else if let alert {
            job.platform = .apns(APNsPayload(alert: .text(alert)), pushType: pushType.map(PushworkerJob.APNsPushType.init(rawValue:)))
        } else {
            throw ValidationError("give --alert TEXT or --payload JSON")
        }
        if let priority {
            guard let value = PushworkerJob.Priority(rawValue: priority) else { throw ValidationError("--priority must be 10, 5 or 1") }
            job.priority = value
        }
        if let expiration {
            if expiration.hasPrefix("+"), let seconds = Int(expiration.dropFirst()) {
                job.expiration = .after(seconds: seconds)
            } else if let seconds = Int(expiration) {
                job.expiration = .unixTime(seconds)
            } else {
                throw ValidationError("--expiration must be UNIX seconds or +N")
            }
        }
        job.collapseID = collapseID
        return job
    }

    /// Prints as `pushworker events` does, until the job's first job.completed or job.rejected
    /// (retries and chunks report their own job.completed later).
    private func printEvents(_ events: PushworkerEvents) async throws {
        let seconds = waitSeconds
        let ended = try await withThrowingTaskGroup(of: Bool.self) { group in
            group.addTask {
                for await event in events {
                    print("\(event.routingKey) \(event.text)")
                    if event.endsJob { return true }
                }
                return false
            }
            group.addTask {
                try await Task.sleep(for: .seconds(seconds))
                await events.cancel()
                return false
            }
            let first = try await group.next() ?? false
            group.cancelAll()
            return first
        }
        await events.cancel()
        if !ended {
            FileHandle.standardError.write(Data("no job.completed or job.rejected for job \(events.jobID?.description ?? "") within \(seconds) s\n".utf8))
            throw ExitCode.failure
        }
    }
}
