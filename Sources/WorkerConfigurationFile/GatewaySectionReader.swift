import HTTP2
import PushCore
import Yams

/// Reads `gateway:`; the checks against the apps (a key's apps, the relay's and pushd's app) run
/// once the apps are read.
enum GatewaySectionReader {
    static let keys = ["listen", "max_body_bytes", "relay", "relay_apps", "relay_limits", "trusted_proxies", "pushd_udp", "pushd_app", "api_keys"]
    static let keyKeys = ["name", "key", "apps", "requests_per_second", "burst"]

    static func read(_ node: Node, reader: inout NodeReader) -> GatewaySection? {
        guard let values = reader.mapping(node, at: "gateway", allowed: keys) else { return nil }
        var section = GatewaySection()
        section.listen = reader.string(values["listen"], at: "gateway.listen")
        section.maxBodyBytes = reader.int(values["max_body_bytes"], at: "gateway.max_body_bytes", range: 1024...(64 << 20))
        section.relay = reader.bool(values["relay"], at: "gateway.relay")
        if let relayApps = values["relay_apps"],
           let apps = reader.mapping(relayApps, at: "gateway.relay_apps", allowed: ["development", "production"]) {
            section.relayDevelopmentApp = reader.string(apps["development"], at: "gateway.relay_apps.development")
            section.relayProductionApp = reader.string(apps["production"], at: "gateway.relay_apps.production")
        }
        if let limits = values["relay_limits"],
           let limitValues = reader.mapping(limits, at: "gateway.relay_limits", allowed: ["per_address", "per_app", "max_addresses"]) {
            section.relayPerAddress = readRate(limitValues["per_address"], at: "gateway.relay_limits.per_address", reader: &reader)
            section.relayPerApp = readRate(limitValues["per_app"], at: "gateway.relay_limits.per_app", reader: &reader)
            section.relayMaxAddresses = reader.int(limitValues["max_addresses"], at: "gateway.relay_limits.max_addresses", range: 100...10_000_000)
        }
        if let proxies = values["trusted_proxies"] {
            section.trustedProxies = readNetworks(proxies, at: "gateway.trusted_proxies", reader: &reader)
        }
        section.pushdUDP = reader.string(values["pushd_udp"], at: "gateway.pushd_udp")
        section.pushdApp = reader.string(values["pushd_app"], at: "gateway.pushd_app")
        if let list = values["api_keys"] {
            guard case let .sequence(items) = list else {
                reader.fail("gateway.api_keys", at: list, "expected a list of keys (lines starting with \"- name: …\"), got \(NodeReader.kind(list))")
                return section
            }
            var names = Set<String>()
            for (index, item) in items.enumerated() {
                let field = "gateway.api_keys[\(index)]"
                guard let key = readKey(item, at: field, reader: &reader) else { continue }
                guard names.insert(key.name).inserted else {
                    reader.fail("\(field).name", at: item["name"], "key \"\(key.name)\" is named twice: each name once")
                    continue
                }
                section.apiKeys.append(key)
            }
        }
        return section
    }

    static func readKey(_ node: Node, at field: String, reader: inout NodeReader) -> GatewaySection.APIKey? {
        guard let values = reader.mapping(node, at: field, allowed: keyKeys) else { return nil }
        let before = reader.findings.count
        let name = reader.string(values["name"], at: "\(field).name")
        if name == nil { reader.fail("\(field).name", at: node, "missing: a name for the key, used in logs") }
        let secret = reader.secret(values["key"], at: "\(field).key")
        if values["key"] == nil { reader.fail("\(field).key", at: node, "missing: the secret, as {env: VARIABLE} or {file: PATH}") }
        var apps: Set<String>?
        if let node = values["apps"] {
            apps = readApps(node, at: "\(field).apps", reader: &reader)
        } else {
            reader.fail("\(field).apps", at: node, "missing: the apps this key may use (a list, or \"*\" for every app)")
        }
        let rate = reader.int(values["requests_per_second"], at: "\(field).requests_per_second", range: 1...1_000_000)
        let burst = reader.int(values["burst"], at: "\(field).burst", range: 1...10_000_000)
        guard reader.findings.count == before, let name, let secret else { return nil }
        return GatewaySection.APIKey(name: name, secret: secret, apps: apps, requestsPerSecond: rate, burst: burst, field: field)
    }

    /// `{requests_per_second: N, burst: N}`, either may be left out.
    static func readRate(_ node: Node?, at field: String, reader: inout NodeReader) -> GatewaySection.Rate? {
        guard let node, let values = reader.mapping(node, at: field, allowed: ["requests_per_second", "burst"]) else { return nil }
        return GatewaySection.Rate(requestsPerSecond: reader.int(values["requests_per_second"], at: "\(field).requests_per_second", range: 1...1_000_000),
                                   burst: reader.int(values["burst"], at: "\(field).burst", range: 1...10_000_000))
    }

    /// A list of addresses or CIDR blocks (`10.0.0.0/8`, `::1`); an empty list trusts no proxy.
    static func readNetworks(_ node: Node, at field: String, reader: inout NodeReader) -> [IPNetwork]? {
        guard case let .sequence(items) = node else {
            reader.fail(field, at: node, "expected a list of addresses or CIDR blocks (e.g. [127.0.0.1, 10.0.0.0/8, \"::1\"]), got \(NodeReader.kind(node))")
            return nil
        }
        var networks = [IPNetwork]()
        for (index, item) in items.enumerated() {
            guard let text = reader.string(item, at: "\(field)[\(index)]") else { continue }
            guard let network = IPNetwork(text) else {
                reader.fail("\(field)[\(index)]", at: item, "\"\(text)\" is not an IP address or CIDR block (e.g. 10.0.0.0/8, ::1)")
                continue
            }
            networks.append(network)
        }
        return networks
    }

    /// A list of app names, or `"*"` (every app: nil).
    static func readApps(_ node: Node, at field: String, reader: inout NodeReader) -> Set<String>? {
        if node.scalar != nil {
            if reader.string(node, at: field) == "*" { return nil }
            reader.fail(field, at: node, "expected a list of app names, or \"*\" for every app")
            return []
        }
        guard case let .sequence(items) = node else {
            reader.fail(field, at: node, "expected a list of app names, or \"*\" for every app")
            return []
        }
        var apps = Set<String>()
        for (index, item) in items.enumerated() {
            if let app = reader.string(item, at: "\(field)[\(index)]") { apps.insert(app) }
        }
        if apps.isEmpty { reader.fail(field, at: node, "the list is empty: the key could not be used for anything") }
        return apps
    }

    /// Every app the section names must be in the file, and the relay's and pushd's be APNs apps.
    static func check(_ section: GatewaySection, apps: [AppEntry], reader: inout NodeReader) {
        let platforms = Dictionary(apps.map { ($0.name, $0.platform) }, uniquingKeysWith: { first, _ in first })
        for key in section.apiKeys {
            for app in (key.apps ?? []).sorted() where platforms[app] == nil {
                reader.fail("\(key.field).apps", line: reader.lines["\(key.field).apps"], "app \"\(app)\" is not in apps:")
            }
        }
        let apnsOnly: [(String, String?)] = [
            ("gateway.relay_apps.development", section.relayDevelopmentApp),
            ("gateway.relay_apps.production", section.relayProductionApp),
            ("gateway.pushd_app", section.pushdApp),
        ]
        for case let (field, app?) in apnsOnly {
            guard let platform = platforms[app] else {
                reader.fail(field, line: reader.lines[field], "app \"\(app)\" is not in apps:")
                continue
            }
            if platform != .apns {
                reader.fail(field, line: reader.lines[field], "app \"\(app)\" is a \(platform.rawValue) app; this sends APNs notifications")
            }
        }
    }
}
