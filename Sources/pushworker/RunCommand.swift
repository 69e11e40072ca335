import APNs
import APNsTokenSharing
import ArgumentParser
import Foundation
import Logging
import PlatformCatalog
import PushCore
import StatusEndpoint
import ServiceLifecycle
import Worker
import WorkerConfigurationFile

struct RunCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "run",
        abstract: "Run a worker: consume push.jobs and deliver to APNs until SIGTERM/SIGINT.",
        discussion: "With --config FILE every app comes from the file and the options below override its worker settings; without it, the --apns-* options and --app describe the one app.")

    @OptionGroup var connection: ConnectionOptions
    @OptionGroup var worker: WorkerOptions
    @OptionGroup var apns: APNsOptions
    @OptionGroup var logging: LoggingOptions

    @Option(help: "The app name jobs use for these APNs settings (the job's \"app\"). Default default. [env PUSHWORKER_APP]")
    var app: String?
    @Option(help: "On exit, write totals and latency percentiles as JSON to this file (used by ops/bench). [env PUSHWORKER_STATS_FILE]")
    var statsFile: String?

    /// Everything the worker runs with, from the file (if any) under the environment and the flags.
    struct Plan {
        var configuration: WorkerConfiguration
        var settings: WorkerSettings
        var certificates: [CertificateExpiry]
        var logger: Logger
        /// The file's configuration as loaded, for SIGHUP's reload; nil without a file.
        var loaded: LoadedConfiguration?
        /// The environment's and the flags' settings, which win over the file's.
        var overrides: WorkerSettings
    }

    func plan() throws -> Plan {
        let overrides = try worker.settings(connection: connection, logging: logging)
        guard let path = worker.configFile else {
            // The one-app shorthand: the --apns-* options describe the app.
            let logger = LoggingOptions.makeLogger(label: "pushworker", level: overrides.effectiveLogLevel, format: try logging.format())
            if let keyFile = apns.privateKeyFile, let warning = KeyFileExposure.warning(app: Env.or(app, "app") ?? "default", file: keyFile) {
                logger.warning("\(warning)")
            }
            var configuration = WorkerConfiguration(
                amqp: connection.amqpConfiguration(name: "pushworker"),
                redis: try connection.redisConfiguration(),
                apps: [Env.or(app, "app") ?? "default": try apns.configuration(logger: logger)])
            do { try overrides.apply(to: &configuration, naming: .flags) } catch { throw ValidationError(error.message) }
            var certificates = [CertificateExpiry]()
            configuration.jobPlatforms = Platform.allJobRules
            if let (name, apns) = configuration.apnsApps.first, case let .certificate(identity) = apns.credentials,
               let summary = try? identity.inspect(), let file = Env.or(self.apns.apnsCertFile, "apns-cert-file"),
               let expiry = CertificateExpiry(app: name, file: file, summary: summary) {
                certificates.append(expiry)
            }
            return Plan(configuration: configuration, settings: overrides, certificates: certificates, logger: logger,
                        loaded: nil, overrides: overrides)
        }
        let refused = apns.given + (app != nil || Env["app"] != nil ? ["--app"] : [])
        guard refused.isEmpty else {
            let named = refused.map { "\($0) (\(Env.variableName(String($0.dropFirst(2)))))" }
            throw ValidationError("with --config, each app's settings come from the file's apps: list in \(path); remove \(named.joined(separator: ", ")): they describe the one app of the shorthand without a file")
        }
        let loaded: LoadedConfiguration
        do {
            loaded = try ConfigurationLoader.load(try ConfigurationFileReader.read(path: path), overrides: overrides, environment: Env.all)
        } catch {
            throw ValidationError(error.description)
        }
        let logger = LoggingOptions.makeLogger(label: "pushworker", level: loaded.settings.effectiveLogLevel, format: try logging.format())
        for warning in loaded.exposedKeyFiles { logger.warning("\(warning)") }
        for (app, apns) in loaded.worker.apnsApps.sorted(by: { $0.key < $1.key }) {
            logger.info("app configured", metadata: [
                "app": "\(app)", "apns.topic": "\(apns.topic ?? "none")",
                "apns.auth": "\(apns.credentials.kind)", "apns.max_connections": "\(apns.maxConnections)",
            ])
        }
        for (app, fcm) in loaded.worker.fcmApps.sorted(by: { $0.key < $1.key }) {
            logger.info("app configured", metadata: [
                "app": "\(app)", "platform": "fcm", "fcm.project": "\(fcm.serviceAccount.projectID)",
                "fcm.client_email": "\(fcm.serviceAccount.clientEmail)",
            ])
        }
        for (app, webPush) in loaded.worker.webPushApps.sorted(by: { $0.key < $1.key }) {
            logger.info("app configured", metadata: [
                "app": "\(app)", "platform": "webpush", "vapid.public_key": "\(webPush.vapidKey.publicKeyBase64URL)",
                "vapid.subject": "\(webPush.subject)",
            ])
        }
        return Plan(configuration: loaded.worker, settings: loaded.settings, certificates: loaded.certificates, logger: logger,
                    loaded: loaded, overrides: overrides)
    }

    func run() async throws {
        let plan = try plan()
        let logger = plan.logger
        let worker: PushWorker
        // Kept for the status port's /metrics (with the port off, nothing reads them).
        let export = PrometheusExport()
        // One provider token per APNs team and key across the fleet, kept in Redis.
        let providerTokens = APNsProviderTokenStore(settings: plan.configuration.providerTokenSharing, logger: logger)
        do {
            worker = try PushWorker(configuration: plan.configuration, credentialStore: providerTokens, logger: logger,
                                    metrics: WorkerMetrics(factory: export.factory))
        } catch {
            throw ValidationError(error.message)
        }
        var services: [ServiceGroupConfiguration.ServiceConfiguration] = [.init(service: worker)]
        // Until shutdown; its end must not end the worker.
        services.append(.init(service: ConfigurationReloader(path: self.worker.configFile, overrides: plan.overrides, worker: worker,
                                                             logger: logger, running: plan.loaded),
                              successTerminationBehavior: .ignore))
        if plan.settings.effectiveStatusPort > 0 {
            services.append(.init(service: StatusServer(host: plan.settings.effectiveStatusHost, port: plan.settings.effectiveStatusPort,
                                                        status: worker.status, logger: logger,
                                                        metrics: { worker.sampleMetrics(); return export.exposition() })))
        }
        if !plan.certificates.isEmpty {
            // Runs until shutdown; its end must not end the worker.
            services.append(.init(service: CertificateExpiryWatch(certificates: plan.certificates, logger: logger),
                                  successTerminationBehavior: .ignore))
        }
        let group = ServiceGroup(configuration: .init(
            services: services,
            gracefulShutdownSignals: [.sigterm, .sigint],
            logger: logger))
        try await group.run()
        if let path = Env.or(statsFile, "stats-file") { try writeStats(worker, to: path) }
    }

    /// The same document `GET /status` serves, at exit.
    private func writeStats(_ worker: PushWorker, to path: String) throws {
        try Data(worker.status.json()).write(to: URL(fileURLWithPath: path))
    }
}

extension APNsConfiguration.Credentials {
    /// For logs: which kind, never the material.
    var kind: String {
        switch self {
        case .token: "token"
        case .certificate: "certificate"
        }
    }
}
