import ArgumentParser
import Operations

struct DeadCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "dead",
        abstract: "List, replay or drop the jobs in the dead queue <job queue>.dead.",
        discussion: """
            Messages are read with basic.get without ack and given back by closing the channel, so looking consumes \
            nothing and the queue keeps its order (a killed command gives them back too). `replay` publishes each \
            selected job to the job queue (mandatory, confirmed) and acks the dead one only after the broker confirmed \
            the copy: interrupted, a job may end up in both queues, never in neither. Only the jobs present when the \
            command starts are looked at.
            """,
        subcommands: [List.self, Replay.self, Drop.self])

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Print the id, app, rejected field and error of the first dead jobs, oldest first, leaving them in the queue.")
        @OptionGroup var target: BrokerTarget
        @Option(help: "Show at most this many jobs.") var limit = 100
        @Flag(help: "A JSON array of {\"id\", \"app\", \"field\", \"error\", \"rejected_at\", \"truncated_from\", \"bytes\"}.") var json = false

        func validate() throws {
            guard limit > 0 else { throw ValidationError("--limit must be at least 1, got \(limit)") }
        }

        func run() async throws {
            let (listing, queue) = try await target.withBroker(connectionName: "pushworker-dead") { amqp, jobQueue, _ in
                let dead = DeadQueue(amqp: amqp, jobQueue: jobQueue)
                return (try await dead.list(limit: limit), dead.name)
            }
            print(json ? DeadListReport.json(listing.letters) : DeadListReport.text(listing.letters, queue: queue, ready: listing.ready))
        }
    }

    struct Selection: ParsableArguments {
        @Option(name: .customLong("id"), help: "The job's id (its \"id\", or the message id when the body has none). Repeatable.")
        var ids: [String] = []
        @Flag(help: "Every job in the dead queue.") var all = false

        func validate() throws {
            do { _ = try selection } catch { throw ValidationError(error.description) }
        }

        var selection: DeadSelection {
            get throws(OperationError) { try DeadSelection(ids: ids, all: all) }
        }
    }

    struct Replay: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Move dead jobs back to the job queue as fresh jobs (confirmed; the dead copy is acked after the confirm).",
            discussion: """
                The body is published byte for byte (so `attempts` is what the job says), with the publisher's properties and \
                headers; the dead queue's bookkeeping (x-pushworker-*, x-death, x-delivery-count) is left out. A job that was cut \
                to its first 64 KiB (x-pushworker-truncated-from: it was larger than --max-message-bytes) cannot be replayed: it \
                is named and stays. Exit status: 0 when every selected job moved, 2 when some stayed (cut), 1 on an error or when \
                no job matched.
                """)
        @OptionGroup var target: BrokerTarget
        @OptionGroup var selection: Selection
        @Flag(help: "Only say what would move; move nothing.") var dryRun = false

        func run() async throws {
            let selected = try selection.selection
            let (outcome, dead) = try await target.withBroker(connectionName: "pushworker-dead") { amqp, jobQueue, _ in
                let dead = DeadQueue(amqp: amqp, jobQueue: jobQueue)
                return (try await dead.settle(selected, .replay, dryRun: dryRun), dead)
            }
            for letter in outcome.truncated {
                printError("\(letter.name) (app \(letter.app ?? "-")) stays in \(dead.name): only its first \(letter.bodySize) of \(letter.truncatedFrom ?? 0) bytes were kept, so it cannot be replayed")
            }
            let verb = dryRun ? "would move" : "moved"
            print("\(verb) \(outcome.moved) of \(outcome.matched) selected jobs from \(dead.name) to \(dead.jobQueue) (\(outcome.scanned) looked at)")
            try DeadCommand.finish(outcome, selection: selected, queue: dead.name)
        }
    }

    struct Drop: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Remove dead jobs for good (acked). Exit status 1 on an error or when no job matched.",
            discussion: """
                Asks for --yes, on a terminal as in a script: without it (or with --dry-run), nothing is dropped and the \
                jobs that would be are counted; the exit status is then 1.
                """)
        @OptionGroup var target: BrokerTarget
        @OptionGroup var selection: Selection
        @Flag(help: "Really drop.") var yes = false
        @Flag(help: "Only count what would be dropped; drop nothing.") var dryRun = false

        func run() async throws {
            let selected = try selection.selection
            let dropping = yes && !dryRun
            let (outcome, dead) = try await target.withBroker(connectionName: "pushworker-dead") { amqp, jobQueue, _ in
                let dead = DeadQueue(amqp: amqp, jobQueue: jobQueue)
                return (try await dead.settle(selected, .drop, dryRun: !dropping), dead)
            }
            guard dropping else {
                print("would drop \(outcome.matched) selected jobs from \(dead.name) (\(outcome.scanned) looked at)")
                try DeadCommand.finish(outcome, selection: selected, queue: dead.name)
                if !dryRun { printError("nothing dropped: add --yes to drop them") }
                throw ExitCode.failure
            }
            print("dropped \(outcome.dropped) of \(outcome.matched) selected jobs from \(dead.name) (\(outcome.scanned) looked at)")
            try DeadCommand.finish(outcome, selection: selected, queue: dead.name)
        }
    }

    /// The exit status: a failure or nothing matched is 1, a cut job left behind 2.
    static func finish(_ outcome: DeadOutcome, selection: DeadSelection, queue: String) throws {
        if outcome.copiedTwice > 0 {
            printError("\(outcome.copiedTwice) jobs were copied to the job queue but their dead copies went back to \(queue): they will be sent, and are still listed there")
        }
        if let failure = outcome.failure {
            printError("stopped: \(failure); what was not moved is back in \(queue)")
            throw ExitCode.failure
        }
        if outcome.matched == 0, case .ids(let ids) = selection {
            printError("no job with id \(ids.sorted().joined(separator: ", ")) among the \(outcome.scanned) in \(queue)")
            throw ExitCode.failure
        }
        if !outcome.truncated.isEmpty { throw ExitCode(2) }
    }
}
