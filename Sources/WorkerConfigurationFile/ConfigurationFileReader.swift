import AMQP
import APNs
import APNsCore
import Logging
import PushCore
import WebPush
import Worker
import Yams

/// Reads the YAML file into a `ConfigurationFile`, checking keys, types and the rules that need
/// nothing outside the file; every problem is reported, each with its line.
public enum ConfigurationFileReader {
    static let topKeys = ["amqp", "redis", "worker", "apps", "gateway"]
    static let workerKeys = [
        "prefetch", "max_in_flight", "chunk_size", "retry_delays", "group_key_prefix", "max_message_bytes",
        "max_bytes_in_flight", "max_redeliveries", "completion_events", "shutdown_timeout",
        "credentials_retry_interval", "unknown_app_grace", "job_queue", "queue_type", "results_exchange", "status_port", "status_host", "log_level",
        "token_refresh", "token_refresh_for_sandbox_tests",
    ]
    static let appKeys = [
        "name", "platform", "environment", "url", "port", "topic", "token", "certificate", "pkcs12",
        "max_connections", "max_streams", "notifications_per_second", "ping_interval", "idle_timeout", "request_timeout",
        "connect_timeout", "ca_file", "proxy", "prune_invalid_tokens", "vapid", "max_origins", "service_account",
        "allow_private_endpoints", "allowed_endpoint_ports", "trusted_push_services", "push_type_rules",
        "broadcast_management_url",
    ]
    /// The settings only some platforms have: given for another, they would be silently ignored.
    static let platformKeys: [AppEntry.Platform: Set<String>] = [
        .apns: ["environment", "url", "port", "topic", "token", "certificate", "pkcs12", "push_type_rules", "broadcast_management_url"],
        .webpush: ["vapid", "max_origins", "allow_private_endpoints", "allowed_endpoint_ports", "trusted_push_services"],
        .fcm: ["service_account", "url"],
    ]

    public static func read(path: String) throws(ConfigurationProblems) -> ConfigurationFile {
        guard let bytes = FileBytes.contents(of: path) else {
            throw ConfigurationProblems([ConfigurationFinding(file: path, line: nil, field: "file", message: "cannot read \(path)")])
        }
        guard let text = String(validating: bytes, as: UTF8.self) else {
            throw ConfigurationProblems([ConfigurationFinding(file: path, line: nil, field: "file", message: "is not UTF-8 text")])
        }
        return try parse(text, path: path)
    }

    public static func parse(_ text: String, path: String) throws(ConfigurationProblems) -> ConfigurationFile {
        let root: Node?
        do { root = try Yams.compose(yaml: text) } catch {
            throw ConfigurationProblems([syntaxFinding(error, path: path)])
        }
        var reader = NodeReader(file: path)
        var file = ConfigurationFile(path: path)
        guard let root, let top = reader.mapping(root, at: "", allowed: topKeys) else {
            if root == nil { reader.fail("apps", line: nil, "the file is empty: it needs at least an apps list") }
            throw ConfigurationProblems(reader.findings)
        }
        if let amqp = top["amqp"], let values = reader.mapping(amqp, at: "amqp", allowed: ["url", "ca_file"]) {
            file.settings.amqpURL = reader.string(values["url"], at: "amqp.url")
            file.settings.amqpCAFile = reader.string(values["ca_file"], at: "amqp.ca_file")
        }
        if let redis = top["redis"], let values = reader.mapping(redis, at: "redis", allowed: ["url"]) {
            file.settings.redisURL = reader.string(values["url"], at: "redis.url")
        }
        if let worker = top["worker"] { readWorker(worker, into: &file.settings, reader: &reader) }
        if let apps = top["apps"] {
            file.apps = readApps(apps, reader: &reader)
        } else {
            reader.fail("apps", line: nil, "missing: list at least one app (name, platform, credentials)")
        }
        if let gateway = top["gateway"], let section = GatewaySectionReader.read(gateway, reader: &reader) {
            GatewaySectionReader.check(section, apps: file.apps, reader: &reader)
            file.gateway = section
        }
        file.lines = reader.lines
        guard reader.findings.isEmpty else { throw ConfigurationProblems(reader.findings) }
        return file
    }

    static func syntaxFinding(_ error: any Error, path: String) -> ConfigurationFinding {
        if let yaml = error as? YamlError {
            switch yaml {
            case let .scanner(_, problem, mark, _), let .parser(_, problem, mark, _), let .composer(_, problem, mark, _):
                return ConfigurationFinding(file: path, line: mark.line, field: "yaml", message: "\(problem) (column \(mark.column))")
            default: break
            }
        }
        return ConfigurationFinding(file: path, line: nil, field: "yaml", message: "\(error)")
    }

    static func readWorker(_ node: Node, into settings: inout WorkerSettings, reader: inout NodeReader) {
        guard let values = reader.mapping(node, at: "worker", allowed: workerKeys) else { return }
        func field(_ key: String) -> String { "worker.\(key)" }
        if let text = reader.string(values["prefetch"], at: field("prefetch")) {
            if let prefetch = WorkerSettings.Prefetch(text) { settings.prefetch = prefetch } else {
                reader.fail(field("prefetch"), at: values["prefetch"], "expected auto or 1…65535, got \"\(text)\"")
            }
        }
        settings.maxInFlight = reader.int(values["max_in_flight"], at: field("max_in_flight"), range: 1...10_000_000)
        settings.chunkSize = reader.int(values["chunk_size"], at: field("chunk_size"), range: 1...100_000)
        if let node = values["retry_delays"] { settings.retryDelays = readDelays(node, at: field("retry_delays"), reader: &reader) }
        settings.groupKeyPrefix = reader.string(values["group_key_prefix"], at: field("group_key_prefix"))
        settings.maxMessageBytes = reader.int(values["max_message_bytes"], at: field("max_message_bytes"), range: 1024...Int(Int32.max))
        settings.maxBytesInFlight = reader.int(values["max_bytes_in_flight"], at: field("max_bytes_in_flight"), range: 1024...Int.max)
        settings.maxRedeliveries = reader.int(values["max_redeliveries"], at: field("max_redeliveries"), range: 1...1000)
        settings.completionEvents = reader.choice(values["completion_events"], at: field("completion_events"), of: CompletionEvents.self)
        settings.shutdownTimeout = reader.duration(values["shutdown_timeout"], at: field("shutdown_timeout"), positive: false)
        settings.credentialsRetryInterval = reader.duration(values["credentials_retry_interval"], at: field("credentials_retry_interval"))
        settings.unknownAppGrace = reader.duration(values["unknown_app_grace"], at: field("unknown_app_grace"), positive: false)
        settings.jobQueue = reader.string(values["job_queue"], at: field("job_queue"))
        settings.queueType = reader.choice(values["queue_type"], at: field("queue_type"), of: QueueType.self)
        settings.resultsExchange = reader.string(values["results_exchange"], at: field("results_exchange"))
        settings.statusPort = reader.int(values["status_port"], at: field("status_port"), range: 0...65535)
        settings.statusHost = reader.string(values["status_host"], at: field("status_host"))
        settings.logLevel = reader.choice(values["log_level"], at: field("log_level"), of: Logger.Level.self)
        settings.tokenRefresh = reader.duration(values["token_refresh"], at: field("token_refresh"))
        settings.tokenRefreshForSandboxTests = reader.bool(values["token_refresh_for_sandbox_tests"], at: field("token_refresh_for_sandbox_tests"))
    }

    /// A list (`[1s, 5s, 30s]`) or the flag's comma-separated text (`1s,5s,30s`).
    static func readDelays(_ node: Node, at field: String, reader: inout NodeReader) -> [Duration]? {
        let items: [Node]
        if case let .sequence(sequence) = node {
            items = Array(sequence)
        } else if let text = reader.string(node, at: field) {
            items = text.split(separator: ",").map { Node(String($0)) }
        } else {
            return nil
        }
        var delays = [Duration]()
        for (index, item) in items.enumerated() {
            // Items split from one line carry no mark of their own: the list's line stands for them.
            let located = item.mark == nil ? node : item
            guard let text = reader.string(item, at: "\(field)[\(index)]"), let delay = DurationText.parse(text), delay > .zero else {
                reader.fail("\(field)[\(index)]", at: located, "expected a duration such as 500ms, 5s, 2m or 1h")
                return nil
            }
            delays.append(delay)
        }
        return delays
    }

    static func readApps(_ node: Node, reader: inout NodeReader) -> [AppEntry] {
        guard case let .sequence(sequence) = node else {
            reader.fail("apps", at: node, "expected a list of apps (lines starting with \"- name: …\"), got \(NodeReader.kind(node))")
            return []
        }
        var apps = [AppEntry]()
        var seen = [String: String]()
        for (index, item) in sequence.enumerated() {
            let field = "apps[\(index)]"
            // Checked apart from the rest of the entry, so a repeated name is reported even when
            // the entry has other mistakes.
            var repeated = false
            if let nameNode = item["name"], let name = nameNode.scalar?.string {
                if let first = seen[name] {
                    reader.fail("\(field).name", at: nameNode, "app \"\(name)\" is already configured by \(first): each app name once")
                    repeated = true
                } else {
                    seen[name] = field
                }
            }
            guard let app = readApp(item, at: field, reader: &reader), !repeated else { continue }
            apps.append(app)
        }
        if sequence.isEmpty { reader.fail("apps", at: node, "the list is empty: configure at least one app") }
        return apps
    }

    static func readApp(_ node: Node, at field: String, reader: inout NodeReader) -> AppEntry? {
        guard let values = reader.mapping(node, at: field, allowed: appKeys) else { return nil }
        let before = reader.findings.count
        let name = reader.string(values["name"], at: "\(field).name")
        if let name {
            if !JobParser.isName(name) || name.utf8.count > JobParser.maxAppLength {
                reader.fail("\(field).name", at: values["name"], "\"\(name)\" is not a valid job app: 1–\(JobParser.maxAppLength) characters of A–Z, a–z, 0–9, '.', '_' or '-'")
            }
        } else {
            reader.fail("\(field).name", at: node, "missing: the app name jobs give in their \"app\" field")
        }
        let platform = reader.choice(values["platform"], at: "\(field).platform", of: AppEntry.Platform.self) ?? .apns
        let own = platformKeys[platform] ?? []
        for key in platformKeys.values.reduce(into: Set<String>(), { $0.formUnion($1) }).subtracting(own).sorted() where values[key] != nil {
            let owners = AppEntry.Platform.allCases.filter { platformKeys[$0]?.contains(key) == true }.map(\.rawValue).joined(separator: " and ")
            reader.fail("\(field).\(key)", at: values[key], "is a setting of \(owners) apps; this app's platform is \(platform.rawValue)")
        }
        if platform == .fcm {
            let credentials = readServiceAccount(values["service_account"], at: "\(field).service_account", node: node, reader: &reader)
            var app = AppEntry(name: name ?? "", platform: platform, credentials: credentials ?? .pkcs12(file: "", password: nil), field: field)
            app.url = reader.string(values["url"], at: "\(field).url")
            readConnectionSettings(values, at: field, into: &app, reader: &reader)
            app.lines = reader.lines.filter { $0.key.hasPrefix(field + ".") || $0.key == field }
            return reader.findings.count == before && name != nil && credentials != nil ? app : nil
        }
        if platform == .webpush {
            let credentials = readVAPID(values["vapid"], at: "\(field).vapid", node: node, reader: &reader)
            var app = AppEntry(name: name ?? "", platform: platform, credentials: credentials ?? .pkcs12(file: "", password: nil), field: field)
            readConnectionSettings(values, at: field, into: &app, reader: &reader)
            app.maxOrigins = reader.int(values["max_origins"], at: "\(field).max_origins", range: 1...1000)
            app.allowPrivateEndpoints = reader.bool(values["allow_private_endpoints"], at: "\(field).allow_private_endpoints")
            app.allowedEndpointPorts = readEndpointPorts(values["allowed_endpoint_ports"], at: "\(field).allowed_endpoint_ports", reader: &reader)
            app.trustedPushServices = readPushServices(values["trusted_push_services"], at: "\(field).trusted_push_services", reader: &reader)
            app.lines = reader.lines.filter { $0.key.hasPrefix(field + ".") || $0.key == field }
            return reader.findings.count == before && name != nil && credentials != nil ? app : nil
        }
        let environment = reader.choice(values["environment"], at: "\(field).environment", of: APNsConfiguration.Environment.self)
        let url = reader.string(values["url"], at: "\(field).url")
        if environment != nil, url != nil {
            reader.fail("\(field).url", at: values["url"], "give environment or url, not both (url replaces the environment's host)")
        }
        let port = reader.int(values["port"], at: "\(field).port", range: 1...65535)
        if let port, port != 443, port != 2197 {
            reader.fail("\(field).port", at: values["port"], "must be 443 or 2197 (use url for anything else)")
        }
        let topic = reader.string(values["topic"], at: "\(field).topic")
        let credentials = readCredentials(values, at: field, topic: topic, node: node, reader: &reader)
        var app = AppEntry(name: name ?? "", platform: platform, credentials: credentials ?? .pkcs12(file: "", password: nil), field: field)
        app.environment = environment
        app.url = url
        app.port = port
        app.topic = topic
        app.pushTypeRules = reader.choice(values["push_type_rules"], at: "\(field).push_type_rules", of: APNsJobRules.PushTypeRules.self)
        app.broadcastManagementURL = reader.string(values["broadcast_management_url"], at: "\(field).broadcast_management_url")
        readConnectionSettings(values, at: field, into: &app, reader: &reader)
        app.lines = reader.lines.filter { $0.key.hasPrefix(field + ".") || $0.key == field }
        return reader.findings.count == before && name != nil && credentials != nil ? app : nil
    }

    /// What every platform's connections share.
    static func readConnectionSettings(_ values: [String: Node], at field: String, into app: inout AppEntry, reader: inout NodeReader) {
        app.maxConnections = reader.int(values["max_connections"], at: "\(field).max_connections", range: 1...1000)
        app.maxStreams = reader.int(values["max_streams"], at: "\(field).max_streams", range: 1...100_000)
        app.notificationsPerSecond = reader.int(values["notifications_per_second"], at: "\(field).notifications_per_second",
                                                range: 1...1_000_000)
        app.pingInterval = reader.duration(values["ping_interval"], at: "\(field).ping_interval")
        app.idleTimeout = reader.duration(values["idle_timeout"], at: "\(field).idle_timeout")
        app.requestTimeout = reader.duration(values["request_timeout"], at: "\(field).request_timeout")
        app.connectTimeout = reader.duration(values["connect_timeout"], at: "\(field).connect_timeout")
        app.caFile = reader.string(values["ca_file"], at: "\(field).ca_file")
        app.proxy = reader.string(values["proxy"], at: "\(field).proxy")
        app.pruneInvalidTokens = reader.bool(values["prune_invalid_tokens"], at: "\(field).prune_invalid_tokens")
    }

    /// `trusted_push_services: [fcm.googleapis.com, "*.notify.windows.com", push.example:8443]`;
    /// an empty list trusts none (only refusals from several origins then pause the app).
    static func readPushServices(_ node: Node?, at field: String, reader: inout NodeReader) -> [WebPushServiceName]? {
        guard let node else { return nil }
        guard case let .sequence(items) = node else {
            reader.fail(field, at: node, "expected a list of push-service host names such as [fcm.googleapis.com, \"*.notify.windows.com\"], got \(NodeReader.kind(node))")
            return nil
        }
        var names: [WebPushServiceName] = []
        for (index, item) in items.enumerated() {
            guard let text = reader.string(item, at: "\(field)[\(index)]") else { continue }
            guard let name = WebPushServiceName(text) else {
                reader.fail("\(field)[\(index)]", at: item, "expected a host name, *.domain, or either with :port, got \"\(text)\"")
                continue
            }
            names.append(name)
        }
        return names
    }

    /// `allowed_endpoint_ports: [443, 8443]`, or `any`.
    static func readEndpointPorts(_ node: Node?, at field: String, reader: inout NodeReader) -> AppEntry.EndpointPorts? {
        guard let node else { return nil }
        if node.scalar != nil {
            guard let text = reader.string(node, at: field) else { return nil }
            if text == "any" { return .any }
            reader.fail(field, at: node, "expected a list of ports such as [443, 8443], or any, got \"\(text)\"")
            return nil
        }
        guard case let .sequence(items) = node else {
            reader.fail(field, at: node, "expected a list of ports such as [443, 8443], or any, got \(NodeReader.kind(node))")
            return nil
        }
        guard !items.isEmpty else {
            reader.fail(field, at: node, "the list is empty: give the ports push services may use, such as [443], or any")
            return nil
        }
        var ports = Set<Int>()
        var complete = true
        for (index, item) in items.enumerated() {
            let before = reader.findings.count
            if let port = reader.int(item, at: "\(field)[\(index)]", range: 1...65535) {
                ports.insert(port)
            } else {
                complete = false
                if reader.findings.count == before { reader.fail("\(field)[\(index)]", at: item, "expected a port, 1…65535, got nothing") }
            }
        }
        return complete ? .only(ports) : nil
    }

    /// `service_account: {file: PATH}` or `{env: VARIABLE}`: the key file Google's console gives.
    static func readServiceAccount(_ node: Node?, at path: String, node parent: Node, reader: inout NodeReader) -> AppEntry.Credentials? {
        guard let node else {
            reader.fail(path, at: parent, "missing: an fcm app needs service_account: {file: /path/to/service-account.json} (or {env: VARIABLE}), the key file of a Google service account with the Firebase Cloud Messaging API")
            return nil
        }
        return reader.secret(node, at: path).map { .serviceAccount($0) }
    }

    /// `vapid: {private_key: {env: …}, subject: mailto:…, public_key: …}`.
    static func readVAPID(_ section: Node?, at path: String, node: Node, reader: inout NodeReader) -> AppEntry.Credentials? {
        guard let section else {
            reader.fail(path, at: node, "missing: a webpush app needs vapid: {private_key: {env: VARIABLE}, subject: mailto:you@example.com} (make a key pair with pushworker webpush keys)")
            return nil
        }
        guard let values = reader.mapping(section, at: path, allowed: ["private_key", "public_key", "subject"]) else { return nil }
        let key = reader.secret(values["private_key"], at: "\(path).private_key")
        if values["private_key"] == nil {
            reader.fail("\(path).private_key", at: section, "missing: the VAPID private key, as {env: VARIABLE} or {file: PATH} holding the base64url text pushworker webpush keys prints")
        }
        let subject = reader.string(values["subject"], at: "\(path).subject")
        if values["subject"] == nil {
            reader.fail("\(path).subject", at: section, "missing: how push services reach you, mailto:you@example.com or an https: URL")
        }
        let publicKey = reader.string(values["public_key"], at: "\(path).public_key")
        guard let key, let subject else { return nil }
        return .vapid(privateKey: key, subject: subject, publicKey: publicKey)
    }

    static func readCredentials(_ values: [String: Node], at field: String, topic: String?, node: Node, reader: inout NodeReader) -> AppEntry.Credentials? {
        let given = ["token", "certificate", "pkcs12"].filter { values[$0] != nil }
        guard given.count == 1, let kind = given.first, let section = values[kind] else {
            reader.fail(field, at: node, given.isEmpty
                ? "no credentials: give token (key_file or key, key_id, team_id), certificate (cert_file, key_file) or pkcs12 (file)"
                : "give one of token, certificate or pkcs12, not \(given.joined(separator: " and "))")
            return nil
        }
        let path = "\(field).\(kind)"
        switch kind {
        case "token":
            guard let values = reader.mapping(section, at: path, allowed: ["key_file", "key", "key_id", "team_id"]) else { return nil }
            if topic == nil {
                // The provider token does not name an app: without a topic APNs refuses every notification.
                reader.fail("\(field).topic", at: node, "required with token credentials: the app's bundle ID, e.g. com.example.app")
            }
            let keyFile = reader.string(values["key_file"], at: "\(path).key_file")
            let key = reader.secret(values["key"], at: "\(path).key")
            let keyID = identifier(values["key_id"], in: section, at: "\(path).key_id", reader: &reader)
            let teamID = identifier(values["team_id"], in: section, at: "\(path).team_id", reader: &reader)
            let source: SecretSource?
            switch (keyFile, key) {
            case let (.some(file), nil): source = .file(file)
            case let (nil, .some(key)): source = key
            case (.some, .some):
                reader.fail("\(path).key", at: values["key"], "give key_file or key, not both")
                source = nil
            case (nil, nil):
                if values["key"] == nil { reader.fail(path, at: section, "give key_file (the .p8 file) or key ({env: VARIABLE})") }
                source = nil
            }
            guard let source, let keyID, let teamID else { return nil }
            return .token(key: source, keyID: keyID, teamID: teamID)
        case "certificate":
            guard let values = reader.mapping(section, at: path, allowed: ["cert_file", "key_file", "password"]) else { return nil }
            let password = reader.secret(values["password"], at: "\(path).password")
            guard let certificate = reader.string(values["cert_file"], at: "\(path).cert_file") else {
                reader.fail("\(path).cert_file", at: section, "missing: the PEM certificate file")
                return nil
            }
            return .certificate(certificateFile: certificate, keyFile: reader.string(values["key_file"], at: "\(path).key_file"), password: password)
        default:
            guard let values = reader.mapping(section, at: path, allowed: ["file", "password"]) else { return nil }
            let password = reader.secret(values["password"], at: "\(path).password")
            guard let file = reader.string(values["file"], at: "\(path).file") else {
                reader.fail("\(path).file", at: section, "missing: the .p12 or .pfx file")
                return nil
            }
            return .pkcs12(file: file, password: password)
        }
    }

    /// Apple's Key ID and Team ID: 10 letters and digits.
    static func identifier(_ node: Node?, in section: Node, at field: String, reader: inout NodeReader) -> String? {
        guard let text = reader.string(node, at: field) else {
            reader.fail(field, at: node ?? section, "missing: the 10-character identifier from Apple's developer account")
            return nil
        }
        guard text.count == 10, text.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber) }) else {
            reader.fail(field, at: node, text.count == 10 ? "expected letters and digits, got \"\(text)\"" : "expected 10 characters, got \"\(text)\"")
            return nil
        }
        return text
    }
}
