import ArgumentParser
import Operations
import Redis

extension GroupsCommand {
    struct Import: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Add the devices of a file (or standard input: -), one per line, to a group.",
            discussion: """
                Each line is checked with the --platform's rules (as `groups add` does); blank lines are skipped, spaces and \
                a carriage return around a token ignored. A bad line is reported on standard error by its number (the first \
                \(Self.shownBadLines); a count of the rest) and skipped: the other lines are still added. The devices go to \
                Redis as pipelined SADDs of --batch-size members, --pipeline SADDs per round trip; SADD is idempotent, so an \
                import cut short can be run again. A progress bar is shown on standard error when it is a terminal. \
                Exit status: 0 when every line was good, 2 when some lines were bad (the good ones were added), 1 on an \
                error (nothing more is added after it).
                """)

        static let shownBadLines = 100

        @OptionGroup var target: Target
        @Argument(help: "The file of devices, one per line, or - for standard input.") var file: String
        @Option(help: "Devices per SADD.") var batchSize = 1000
        @Option(help: "SADDs sent before their replies are read (one round trip).") var pipeline = 16
        @Flag(help: "No progress bar, even on a terminal.") var noProgress = false

        func validate() throws {
            guard (1...100_000).contains(batchSize) else { throw ValidationError("--batch-size must be 1…100000, got \(batchSize)") }
            guard (1...1000).contains(pipeline) else { throw ValidationError("--pipeline must be 1…1000, got \(pipeline)") }
        }

        func run() async throws {
            var reader = try LineReader(path: file)
            var importer = GroupImport(redis: try target.client(), key: target.key, rules: try target.rules)
            importer.batchSize = batchSize
            importer.pipelineDepth = pipeline
            let bar = ImportProgressBar(enabled: !noProgress)
            let started = ContinuousClock.now
            var shown = 0
            let summary: ImportSummary
            do {
                summary = try await importer.run(&reader, onBadLine: { bad in
                    shown += 1
                    guard shown <= Self.shownBadLines else { return }
                    bar.clear()
                    printError("\(file):\(bad.number): \(bad.problem)")
                }, onProgress: bar.update)
            } catch {
                bar.clear()
                throw error
            }
            bar.clear()
            if summary.bad > Self.shownBadLines { printError("… and \(summary.bad - Self.shownBadLines) more bad lines") }
            let elapsed = ContinuousClock.now - started
            let size = try await target.client().setCardinality(key: target.key)
            print("\(summary.lines) lines in \(Self.seconds(elapsed)) s: "
                  + "\(summary.devices) devices (\(summary.added) new, \(summary.devices - summary.added) already in the group or repeated), "
                  + "\(summary.bad) bad, \(summary.blank) blank; \(target.key) has \(size) devices")
            if summary.bad > 0 { throw ExitCode(2) }
        }

        /// Seconds with two decimals.
        static func seconds(_ duration: Duration) -> String {
            let hundredths = Int(duration / .milliseconds(10))
            return "\(hundredths / 100)." + (hundredths % 100 < 10 ? "0" : "") + "\(hundredths % 100)"
        }
    }
}
