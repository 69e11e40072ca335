import Logging
import ServiceLifecycle
import UnixSignals
import Worker
import WorkerConfigurationFile

/// SIGHUP reads the configuration file again and hands its apps to the worker
/// (`PushWorker.reload`): new and changed apps take effect for new jobs; the jobs in flight finish
/// with what they began with. A file with an error is refused, with the error logged, and the
/// running configuration stays. Worker settings (connections, queues, limits) are read at start
/// only. Without a file, SIGHUP is logged and otherwise ignored (it no longer ends the process).
struct ConfigurationReloader: Service {
    let path: String?
    /// The environment's and the command line's settings, which win over the file's as at start.
    let overrides: WorkerSettings
    let worker: PushWorker
    let logger: Logger
    /// What runs now: the last configuration loaded.
    let running: LoadedConfiguration?

    func run() async throws {
        let signals = await UnixSignalsSequence(trapping: .sighup)
        var running = running
        for await _ in signals.cancelOnGracefulShutdown() {
            guard let path else {
                logger.warning("SIGHUP: no configuration file to reload (start the worker with --config FILE)")
                continue
            }
            logger.notice("SIGHUP: reading the configuration again", metadata: ["config.file": "\(path)"])
            let loaded: LoadedConfiguration
            do {
                loaded = try ConfigurationLoader.load(try ConfigurationFileReader.read(path: path), overrides: overrides, environment: Env.all)
            } catch {
                logger.error("configuration reload refused; the running configuration stays:\n\(error)", metadata: ["config.file": "\(path)"])
                continue
            }
            for warning in loaded.warnings { logger.warning("\(warning)") }
            if let running, loaded.settings != running.settings {
                logger.warning("worker settings changed in the file take effect at the next start: a reload changes the apps only",
                               metadata: ["config.file": "\(path)"])
            }
            let unchanged = Set(loaded.fingerprints.filter { running?.fingerprints[$0.key] == $0.value }.keys)
            do {
                try await worker.reload(apps: loaded.worker.apps, unchanged: unchanged)
                running = loaded
            } catch {
                logger.error("configuration reload refused; the running configuration stays: \(error.message)", metadata: ["config.file": "\(path)"])
            }
        }
    }
}
