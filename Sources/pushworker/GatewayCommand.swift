import ArgumentParser
import Gateway
import Logging
import UnixSignals
import Worker
import WorkerConfigurationFile

struct GatewayCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "gateway",
        abstract: "Take jobs and group changes over HTTP (POST /v1/jobs, /v1/groups/APP/GROUP), Web Push posts for the toot-relay relay (/relay-to/…) and pushd's UDP packets; publish them to the job queue with confirms.",
        discussion: "With --config FILE the apps, queue, connections and the gateway: section (API keys, relay apps and limits) come from the file; options override. SIGHUP reads the file again: new apps, API keys, relay apps and limits take effect for new requests, a file with an error is refused and the running configuration stays. Without a file there are no API keys (the /v1 API answers 401), and the relay and pushd publish to the APNs app \"default\".")

    @OptionGroup var connection: ConnectionOptions
    @OptionGroup var logging: LoggingOptions
    @Option(help: "The configuration file (apps, API keys: see examples/pushworker.yaml). [env PUSHWORKER_CONFIG]")
    var config: String?
    @Option(help: "HOST:PORT to serve HTTP on (0 picks a free port). Default 127.0.0.1:8080. [env PUSHWORKER_LISTEN]")
    var listen: String?
    @Option(help: "The largest request body taken (bytes); larger ones get 413. Default 1048576. [env PUSHWORKER_MAX_BODY_BYTES]")
    var maxBodyBytes: Int?
    @Option(help: "Seconds a connection may go without a complete request before it is closed (slow or stalled clients). Default 30.")
    var idleTimeout: Int?
    @Flag(help: "Do not serve the toot-relay relay (/relay-to/…). [env PUSHWORKER_NO_RELAY=1]")
    var noRelay = false
    @Option(help: "The APNs app relayed /relay-to/development/… posts go to. Default: the file's gateway.relay_apps.development, else \"default\".")
    var relayDevelopmentApp: String?
    @Option(help: "The APNs app relayed /relay-to/production/… posts go to. Default: the file's gateway.relay_apps.production, else \"default\".")
    var relayProductionApp: String?
    @Option(help: "Relay posts a second one client address may make (an IPv6 client: its /64), on average. Default: the file's gateway.relay_limits.per_address.requests_per_second, else 50.")
    var relayAddressRate: Int?
    @Option(help: "Relay posts one client address may make at once. Default: the file's gateway.relay_limits.per_address.burst, else 10 seconds at its rate.")
    var relayAddressBurst: Int?
    @Option(help: "Relay posts a second one relay app takes from all clients together, on average. Default: the file's gateway.relay_limits.per_app.requests_per_second, else 500.")
    var relayAppRate: Int?
    @Option(help: "Relay posts one relay app takes at once. Default: the file's gateway.relay_limits.per_app.burst, else 10 seconds at its rate.")
    var relayAppBurst: Int?
    @Option(help: "Take pushd's UDP packets on HOST:REGISTRATION_PORT,NOTIFICATION_PORT (pushd's: 127.0.0.1:7734,7874). Off unless given.")
    var pushdUdp: String?
    @Flag(help: "Allow --pushd-udp on an address other than loopback. pushd's protocol has no authentication: anyone who reaches the ports can register devices and send notifications.")
    var pushdUdpPublic = false
    @Option(help: "The APNs app pushd's groups and notifications belong to. Default \"default\".")
    var pushdApp: String?
    @Option(help: "Job queue (without a file; the file's worker.job_queue otherwise). Default push.jobs.")
    var jobQueue: String?
    @Option(help: "Redis key prefix of group sets (without a file). Default group:.")
    var groupKeyPrefix: String?

    func run() async throws {
        let logger = try logging.makeLogger(label: "pushworker.gateway")
        let settings = try makeSettings()
        let gateway = Gateway(settings: settings, logger: logger)
        // Trapped before the gateway listens, so that a SIGHUP sent once it does never ends it.
        let hangups = await UnixSignalsSequence(trapping: .sighup)
        let reloader = GatewayReloader(path: Env.or(config, "config"), hangups: hangups, makeSettings: { [self] in try makeSettings() }, gateway: gateway, logger: logger)
        try await gateway.run(services: [reloader]) { port in
            var metadata: Logger.Metadata = [
                "listen": "\(settings.host):\(port)", "api_keys": "\(settings.apiKeys.count)", "relay": "\(Self.relaySummary(settings))",
            ]
            if let pushd = settings.pushd {
                metadata["pushd_udp"] = "\(pushd.host):\(pushd.registrationPort),\(pushd.notificationPort) → \(settings.pushdApp)"
            }
            logger.info("gateway listening", metadata: metadata)
        }
    }

    /// Where the relay sends and how much it takes, for the logs.
    static func relaySummary(_ settings: GatewaySettings) -> String {
        guard settings.relayEnabled else { return "off" }
        let limits = settings.relayLimits
        return "/relay-to/ → \(settings.relayDevelopmentApp), \(settings.relayProductionApp); "
            + "per address \(limits.perAddress.requestsPerSecond)/s burst \(limits.perAddress.burst), "
            + "per app \(limits.perApp.requestsPerSecond)/s burst \(limits.perApp.burst)"
    }

    func makeSettings() throws -> GatewaySettings {
        var settings: GatewaySettings
        var section = GatewaySection()
        if let path = Env.or(config, "config") {
            let file: ConfigurationFile
            do { file = try ConfigurationFileReader.read(path: path) } catch {
                throw ValidationError("\(path) has errors:\n\(error.description)")
            }
            var overrides = WorkerSettings()
            overrides.amqpURL = Env.or(connection.amqpURL, "amqp-url")
            overrides.amqpCAFile = Env.or(connection.amqpCAFile, "amqp-ca-file")
            overrides.redisURL = Env.or(connection.redisURL, "redis-url")
            let merged = file.settings.overridden(by: overrides)
            do {
                let (amqp, redis) = try merged.connections(connectionName: "pushworker-gateway")
                settings = GatewaySettings(amqp: amqp, redis: redis)
            } catch {
                throw ValidationError("\(error.setting): \(error.message)")
            }
            settings.apps = Dictionary(file.apps.map { ($0.name, $0.platform) }, uniquingKeysWith: { first, _ in first })
            settings.jobQueue = merged.jobQueue ?? settings.jobQueue
            settings.queueType = merged.queueType ?? settings.queueType
            settings.groupKeyPrefix = merged.groupKeyPrefix ?? settings.groupKeyPrefix
            section = file.gateway ?? GatewaySection()
            do { settings.apiKeys = try section.loadKeys(path: path, lines: file.lines, environment: Env.all) } catch {
                throw ValidationError("\(path) has errors:\n\(error.description)")
            }
        } else {
            settings = GatewaySettings(amqp: connection.amqpConfiguration(name: "pushworker-gateway"),
                                       redis: try connection.redisConfiguration())
        }
        if let queue = jobQueue { settings.jobQueue = queue }
        if let type = try connection.parsedQueueType() { settings.queueType = type }
        if let prefix = groupKeyPrefix { settings.groupKeyPrefix = prefix }
        do {
            let address = try ListenAddress(parsing: listen ?? section.listen ?? "127.0.0.1:8080")
            (settings.host, settings.port) = (address.host, address.port)
            if let udp = pushdUdp ?? section.pushdUDP { settings.pushd = try PushdEndpoints(parsing: udp) }
        } catch {
            throw ValidationError(error.message)
        }
        if let endpoints = settings.pushd, !endpoints.isLoopback, !pushdUdpPublic {
            throw ValidationError("--pushd-udp: \(endpoints.host) is not a loopback address, and pushd's UDP protocol has no authentication (anyone who reaches the ports can register devices and send notifications). Listen on 127.0.0.1 behind your own filtering, or add --pushd-udp-public to accept that")
        }
        if let idleTimeout {
            guard (1...3600).contains(idleTimeout) else { throw ValidationError("--idle-timeout must be 1 to 3600 seconds, got \(idleTimeout)") }
            settings.idleTimeout = .seconds(idleTimeout)
        }
        if let limit = maxBodyBytes ?? section.maxBodyBytes {
            guard (1024...(64 << 20)).contains(limit) else { throw ValidationError("--max-body-bytes: must be 1024…67108864, got \(limit)") }
            settings.maxBodyBytes = limit
        }
        settings.relayEnabled = noRelay ? false : section.relay ?? true
        settings.relayLimits.perAddress = try relayRate(rate: ("--relay-address-rate", relayAddressRate), burst: ("--relay-address-burst", relayAddressBurst),
                                                        file: section.relayPerAddress, default: settings.relayLimits.perAddress)
        settings.relayLimits.perApp = try relayRate(rate: ("--relay-app-rate", relayAppRate), burst: ("--relay-app-burst", relayAppBurst),
                                                    file: section.relayPerApp, default: settings.relayLimits.perApp)
        settings.relayLimits.maxAddresses = section.relayMaxAddresses ?? settings.relayLimits.maxAddresses
        settings.trustedProxies = section.trustedProxies ?? settings.trustedProxies
        settings.relayDevelopmentApp = relayDevelopmentApp ?? section.relayDevelopmentApp ?? "default"
        settings.relayProductionApp = relayProductionApp ?? section.relayProductionApp ?? "default"
        settings.pushdApp = pushdApp ?? section.pushdApp ?? "default"
        for (option, app) in [("relay app", settings.relayDevelopmentApp), ("relay app", settings.relayProductionApp), ("pushd app", settings.pushdApp)] {
            guard let platform = settings.apps[app] else {
                throw ValidationError("the \(option) \"\(app)\" is not an app of the configuration (known: \(settings.apps.keys.sorted().joined(separator: ", ")))")
            }
            guard platform == .apns else { throw ValidationError("the \(option) \"\(app)\" is a \(platform.rawValue) app; it must be an APNs app") }
        }
        return settings
    }

    /// A relay bucket from its options, else the file, else the default; a rate without a burst
    /// gets 10 seconds' worth.
    private func relayRate(rate: (option: String, value: Int?), burst: (option: String, value: Int?), file: GatewaySection.Rate?,
                           default fallback: RelayLimits.Rate) throws -> RelayLimits.Rate {
        if let value = rate.value, !(1...1_000_000).contains(value) {
            throw ValidationError("\(rate.option) must be 1…1000000 posts a second, got \(value)")
        }
        if let value = burst.value, !(1...10_000_000).contains(value) {
            throw ValidationError("\(burst.option) must be 1…10000000 posts, got \(value)")
        }
        let perSecond = rate.value ?? file?.requestsPerSecond
        let size = burst.value ?? file?.burst
        guard let perSecond else { return RelayLimits.Rate(requestsPerSecond: fallback.requestsPerSecond, burst: size ?? fallback.burst) }
        return size.map { RelayLimits.Rate(requestsPerSecond: perSecond, burst: $0) } ?? RelayLimits.Rate(requestsPerSecond: perSecond)
    }
}
