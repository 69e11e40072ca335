import Gateway
import Logging
import ServiceLifecycle
import UnixSignals

/// SIGHUP reads the gateway's configuration file again, with the command line and environment
/// over it as at start, and puts it in force (`Gateway.reload`): new apps, API keys, relay apps
/// and limits apply to new requests; requests in progress finish with what they began with. A file
/// with an error is refused, each error logged with its field, and the running configuration
/// stays. The listen address, connections and queue are read at start only.
struct GatewayReloader: Service {
    let path: String?
    /// Trapped by the caller before the gateway listens.
    let hangups: UnixSignalsSequence
    let makeSettings: @Sendable () throws -> GatewaySettings
    let gateway: Gateway
    let logger: Logger

    func run() async throws {
        for await _ in hangups.cancelOnGracefulShutdown() {
            guard let path else {
                logger.warning("SIGHUP: no configuration file to reload (start the gateway with --config FILE)")
                continue
            }
            logger.notice("SIGHUP: reading the configuration again", metadata: ["config.file": "\(path)"])
            let settings: GatewaySettings
            do { settings = try makeSettings() } catch {
                // One line, every error with its file, line and field: a log shipper keeps it whole.
                let problems = "\(error)".split(separator: "\n").joined(separator: "; ")
                logger.error("gateway configuration reload refused; the running configuration stays: \(problems)", metadata: ["config.file": "\(path)"])
                continue
            }
            for field in gateway.reload(settings) {
                logger.warning("\(field) changed in the file: it is read at start only, the running value stays until a restart",
                               metadata: ["config.file": "\(path)"])
            }
            logger.notice("gateway configuration reloaded: new requests use it", metadata: [
                "config.file": "\(path)", "apps": "\(settings.apps.keys.sorted().joined(separator: ","))",
                "api_keys": "\(settings.apiKeys.map(\.name).sorted().joined(separator: ","))",
                "relay": "\(GatewayCommand.relaySummary(settings))",
            ])
        }
    }
}
