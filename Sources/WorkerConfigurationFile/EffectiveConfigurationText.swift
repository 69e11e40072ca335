import APNs
import PushCore
import FCM
import WebPush
import Worker

/// The configuration in effect, as YAML in the file's own shape, for `pushworker config check`:
/// every value, defaults included, with secrets (key contents, passwords, URL passwords) as `***`.
public enum EffectiveConfigurationText {
    public static func render(_ loaded: LoadedConfiguration) -> String {
        let worker = loaded.worker
        let settings = loaded.settings
        var lines = [String]()
        lines.append("amqp:")
        lines.append("  url: \(quoted(maskingPassword(in: worker.amqp.url)))")
        if let caFile = worker.amqp.caFile { lines.append("  ca_file: \(quoted(caFile))") }
        lines.append("redis:")
        lines.append("  url: \(quoted(maskingPassword(in: settings.redisURL ?? WorkerSettings.defaultRedisURL)))")
        lines.append("worker:")
        lines.append("  prefetch: \(worker.tunesPrefetch ? "auto" : "\(worker.prefetch)")")
        lines.append("  max_in_flight: \(worker.maxInFlight)")
        lines.append("  chunk_size: \(worker.chunkSize)")
        lines.append("  retry_delays: [\(worker.retry.delays.map(DurationText.format).joined(separator: ", "))]")
        lines.append("  group_key_prefix: \(quoted(worker.groupKeyPrefix))")
        lines.append("  max_message_bytes: \(worker.maxMessageBytes)")
        lines.append("  max_bytes_in_flight: \(worker.maxBytesInFlight)")
        lines.append("  max_redeliveries: \(worker.maxRedeliveries)")
        lines.append("  completion_events: \(worker.completionEvents.rawValue)")
        lines.append("  shutdown_timeout: \(DurationText.format(worker.shutdownTimeout))")
        lines.append("  credentials_retry_interval: \(DurationText.format(worker.credentialsRetryInterval))")
        lines.append("  unknown_app_grace: \(DurationText.format(worker.unknownAppGrace))")
        lines.append("  token_refresh: \(DurationText.format(worker.providerTokenRefresh))")
        if worker.providerTokenRefreshBelow20Minutes { lines.append("  token_refresh_for_sandbox_tests: true") }
        lines.append("  job_queue: \(quoted(worker.jobQueue))")
        lines.append("  queue_type: \(worker.queueType)")
        lines.append("  results_exchange: \(quoted(worker.resultsExchange))")
        lines.append("  status_port: \(settings.effectiveStatusPort)")
        lines.append("  status_host: \(quoted(settings.effectiveStatusHost))")
        lines.append("  log_level: \(settings.effectiveLogLevel.rawValue)")
        lines.append("apps:")
        for app in loaded.apps {
            if let fcm = worker.apps[app.name] as? FCMConfiguration {
                lines.append(contentsOf: fcmLines(app, fcm))
                continue
            }
            if let webPush = worker.apps[app.name] as? WebPushConfiguration {
                lines.append(contentsOf: webPushLines(app, webPush))
                continue
            }
            guard let apns = worker.apps[app.name] as? APNsConfiguration else { continue }
            lines.append("  - name: \(quoted(app.name))")
            lines.append("    platform: \(app.platform.rawValue)")
            if let url = apns.url {
                lines.append("    url: \(quoted(url))")
            } else {
                lines.append("    environment: \(apns.environment.rawValue)")
                lines.append("    port: \(apns.port)")
            }
            lines.append("    topic: \(apns.topic.map(quoted) ?? "~")")
            lines.append("    push_type_rules: \(apns.pushTypeRules.rawValue)")
            if let management = apns.broadcastManagementURL { lines.append("    broadcast_management_url: \(quoted(management))") }
            lines.append(contentsOf: credentialLines(app.credentials))
            lines.append(contentsOf: connectionLines(apns, .apns, app: app))
        }
        return lines.joined(separator: "\n") + "\n"
    }

    /// The connection settings every platform's app has, read where that platform keeps them.
    static func connectionLines<Configuration>(_ configuration: Configuration, _ keys: ConnectionSettingKeys<Configuration>,
                                               app: AppEntry) -> [String] {
        var lines = [
            "    max_connections: \(configuration[keyPath: keys.maxConnections])",
            "    max_streams: \(configuration[keyPath: keys.maxStreams])",
        ]
        if let rateKey = keys.notificationsPerSecond, let rate = configuration[keyPath: rateKey] {
            lines.append("    notifications_per_second: \(rate)")
        }
        lines.append("    prune_invalid_tokens: \(configuration[keyPath: keys.pruneInvalidTokens])")
        lines.append("    ping_interval: \(DurationText.format(configuration[keyPath: keys.pingInterval]))")
        lines.append("    idle_timeout: \(DurationText.format(configuration[keyPath: keys.idleTimeout]))")
        lines.append("    request_timeout: \(DurationText.format(configuration[keyPath: keys.requestTimeout]))")
        lines.append("    connect_timeout: \(DurationText.format(configuration[keyPath: keys.connectTimeout]))")
        if let caFile = configuration[keyPath: keys.extraCAFile] { lines.append("    ca_file: \(quoted(caFile))") }
        if let proxy = app.proxy { lines.append("    proxy: \(quoted(maskingPassword(in: proxy)))") }
        return lines
    }

    static func fcmLines(_ app: AppEntry, _ fcm: FCMConfiguration) -> [String] {
        var lines = ["  - name: \(quoted(app.name))", "    platform: fcm"]
        lines.append(contentsOf: credentialLines(app.credentials))
        lines.append("    # \(fcm.serviceAccount)")
        if let url = fcm.url { lines.append("    url: \(quoted(url))") }
        return lines + connectionLines(fcm, .fcm, app: app)
    }

    static func webPushLines(_ app: AppEntry, _ webPush: WebPushConfiguration) -> [String] {
        var lines = ["  - name: \(quoted(app.name))", "    platform: webpush"]
        lines.append(contentsOf: credentialLines(app.credentials))
        lines.append("      public_key: \(quoted(webPush.vapidKey.publicKeyBase64URL))")
        lines.append("    max_origins: \(webPush.maxOrigins)")
        lines.append("    allow_private_endpoints: \(webPush.allowPrivateEndpoints)")
        let ports = webPush.allowedEndpointPorts.map { "[" + $0.sorted().map(String.init).joined(separator: ", ") + "]" } ?? "any"
        lines.append("    allowed_endpoint_ports: \(ports)")
        lines.append("    trusted_push_services: [" + webPush.trustedPushServices.map { quoted($0.description) }.joined(separator: ", ") + "]")
        return lines + connectionLines(webPush, .webPush, app: app)
    }

    static func credentialLines(_ credentials: AppEntry.Credentials) -> [String] {
        switch credentials {
        case let .token(key, keyID, teamID):
            let keyLine: String
            if case let .file(path) = key { keyLine = "      key_file: \(quoted(path))" } else { keyLine = "      key: \(masked(key))" }
            return ["    token:", keyLine, "      key_id: \(keyID)", "      team_id: \(teamID)"]
        case let .certificate(certificateFile, keyFile, password):
            var lines = ["    certificate:", "      cert_file: \(quoted(certificateFile))"]
            if let keyFile { lines.append("      key_file: \(quoted(keyFile))") }
            if let password { lines.append("      password: \(masked(password))") }
            return lines
        case let .pkcs12(file, password):
            var lines = ["    pkcs12:", "      file: \(quoted(file))"]
            if let password { lines.append("      password: \(masked(password))") }
            return lines
        case let .vapid(key, subject, _):
            return ["    vapid:", "      private_key: \(masked(key))", "      subject: \(quoted(subject))"]
        case let .serviceAccount(source):
            return ["    service_account: \(masked(source))"]
        }
    }

    /// Where the secret comes from, never what it is (so the printed text reads back as a file).
    static func masked(_ source: SecretSource) -> String {
        switch source {
        case let .file(path): "{file: \(quoted(path))}  # ***"
        case let .environment(name, base64): "{env: \(name)\(base64 ? ", base64: true" : "")}  # ***"
        }
    }

    /// `scheme://user:***@host…`: the rest of a URL is worth seeing, its password is not.
    public static func maskingPassword(in given: String) -> String {
        var url = given
        // redis-sentinel:// may carry the sentinels' password in its query (docs/guides/redis-ha.md).
        if let query = url.firstIndex(of: "?"), let marker = url[query...].range(of: "sentinel_password=") {
            let end = url[marker.upperBound...].firstIndex(of: "&") ?? url.endIndex
            url = String(url[..<marker.upperBound]) + "***" + url[end...]
        }
        guard let schemeEnd = url.range(of: "://") else { return url }
        let rest = url[schemeEnd.upperBound...]
        guard let at = rest.lastIndex(of: "@") else { return url }
        let userInfo = rest[..<at]
        guard let colon = userInfo.firstIndex(of: ":") else { return url }
        return String(url[..<schemeEnd.upperBound]) + userInfo[..<colon] + ":***" + rest[at...]
    }

    static func quoted(_ text: String) -> String {
        "\"" + text.replacing("\\", with: "\\\\").replacing("\"", with: "\\\"") + "\""
    }
}
