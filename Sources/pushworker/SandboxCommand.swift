import ArgumentParser
import Foundation
import Logging
import PushCore
import Sandbox
import ServiceLifecycle

struct SandboxCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "sandbox",
        abstract: "Run a local APNs simulator (HTTP/2 over TLS, token and certificate auth, APNs' validation and reasons), and with --webpush-port a local Web Push service.",
        discussion: """
            On first start it writes into --state-directory (and reuses later): ca.pem (trust it with --apns-ca-file), \
            server.pem/server-key.pem, token-key.p8 (Key ID SANDBOXKEY, Team ID SANDBOXTM1), and a client identity for \
            topic com.example.app (client.pem, client-key.pem, client.p12 with password "sandbox").
            Rules script answers: --rule '{"token":"<hex>","status":410,"reason":"Unregistered"}' or \
            '{"tokenPrefix":"dead","status":503,"reason":"ServiceUnavailable","times":2}'; a broadcast channel's: \
            '{"channel":"<id>","status":403,"reason":"FeatureNotEnabled"}'.
            """)

    @Option(help: "Address to listen on (loopback by default). [env PUSHWORKER_SANDBOX_HOST]")
    var host: String = Env["sandbox-host"] ?? "127.0.0.1"
    @Option(help: "Port (0 = any free port; the chosen port is printed). [env PUSHWORKER_SANDBOX_PORT]")
    var port: Int = Env.int("sandbox-port", default: 2197)
    @Option(help: "Where the CA, certificates and keys are written and reused. [env PUSHWORKER_SANDBOX_STATE_DIRECTORY]")
    var stateDirectory: String = Env["sandbox-state-directory"] ?? ".pushworker/sandbox"
    @Option(help: "Serve this certificate (PEM) instead of the generated one.") var certificateFile: String?
    @Option(help: "Private key of --certificate-file.") var privateKeyFile: String?
    @Option(help: "SETTINGS_MAX_CONCURRENT_STREAMS advertised. [env PUSHWORKER_SANDBOX_MAX_CONCURRENT_STREAMS]")
    var maxConcurrentStreams: Int = Env.int("sandbox-max-concurrent-streams", default: 1000)
    @Option(help: "Seconds a connection keeps its provider token before it may change it; sooner is answered 429 TooManyProviderTokenUpdates. Default 1200 (APNs' 20 minutes); less only for tests of token refreshing. [env PUSHWORKER_SANDBOX_TOKEN_UPDATE_INTERVAL]")
    var tokenUpdateInterval: Int = Env.int("sandbox-token-update-interval", default: 1200)
    @Option(help: "Accept this token key: KEYID:TEAMID:PATH (.p8 or public key PEM); repeatable. Default: the generated key.")
    var tokenKey: [String] = []
    @Option(help: "Accept only these bundle IDs (repeatable; default any).") var allowedTopic: [String] = []
    @Option(help: "A scripted answer as JSON (repeatable); see above.") var rule: [String] = []
    @Option(help: "Milliseconds added before every answer (a real APNs round trip is ~20–100 ms). [env PUSHWORKER_SANDBOX_LATENCY_MS]")
    var latencyMs: Int = Env.int("sandbox-latency-ms", default: 0)
    @Option(help: "Send GOAWAY after every N requests on a connection.") var goAwayEvery: Int?
    @Option(help: "Reset the TCP connection on every N-th request.") var resetEvery: Int?
    @Option(help: "Never answer every N-th request.") var stallEvery: Int?
    @Flag(help: "Print one line per notification received (tokens shortened).") var logNotifications = false
    @Option(help: "Also run a Web Push service on this port (0 = any free port; default: none): it makes subscriptions, checks VAPID, decrypts and records every message; control under /_sandbox/webpush/. [env PUSHWORKER_SANDBOX_WEBPUSH_PORT]")
    var webpushPort: Int?
    @Option(help: "Also run FCM HTTP v1 and its OAuth token endpoint on this port (0 = any free port; default: none): writes fcm-service-account.json (token_uri on this port) into --state-directory, checks bearer tokens and messages, records every message; control under /_sandbox/fcm/. [env PUSHWORKER_SANDBOX_FCM_PORT]")
    var fcmPort: Int?
    @Option(help: "The Firebase project ID the FCM service answers for.") var fcmProjectID: String = "pushworker-sandbox"
    @Option(help: "Seconds the FCM token endpoint's clock runs ahead of this machine's (negative: behind): it refuses assertions outside its window as Google does, and dates its answers by it. Default 0.")
    var fcmClockOffset: Int = 0
    @Option(help: "Also serve APNs' broadcast channel-management API (create, read, delete and list Live Activity channels) on this port (0 = any free port; default: none). Broadcasts go to the push port. [env PUSHWORKER_SANDBOX_BROADCAST_MANAGEMENT_PORT]")
    var broadcastManagementPort: Int?
    @Option(help: "Event loop threads (default: one per core).") var threads: Int?
    @OptionGroup var logging: LoggingOptions

    func run() async throws {
        let logger = try logging.makeLogger(label: "pushworker.sandbox")
        var configuration = SandboxConfiguration()
        configuration.host = host
        configuration.port = port
        configuration.stateDirectory = stateDirectory
        configuration.certificateFile = certificateFile
        configuration.privateKeyFile = privateKeyFile
        configuration.maxConcurrentStreams = maxConcurrentStreams
        guard tokenUpdateInterval >= 0 else { throw ValidationError("--token-update-interval must be 0 or more seconds") }
        configuration.providerTokenMinimumUpdateInterval = .seconds(tokenUpdateInterval)
        configuration.allowedTopics = allowedTopic
        configuration.logNotifications = logNotifications
        if let threads { configuration.threads = max(1, threads) }
        configuration.tokenKeys = try tokenKey.map(Self.parseTokenKey)
        configuration.rules = try rule.enumerated().map { index, json in
            do { return try JSONDecoder().decode(SandboxRule.self, from: Data(json.utf8)) } catch {
                throw ValidationError("--rule \(index + 1): not a rule (\(error)); example: {\"token\":\"<hex>\",\"status\":410,\"reason\":\"Unregistered\"}")
            }
        }
        configuration.faults.latency = .milliseconds(latencyMs)
        configuration.faults.goAwayEveryRequests = goAwayEvery
        configuration.faults.resetEveryRequests = resetEvery
        configuration.faults.stallEveryRequests = stallEvery
        let sandbox = APNsSandbox(configuration: configuration, logger: logger)
        let boundPort = try await sandbox.start()
        let material = sandbox.material
        // Unbuffered: scripts wait for these lines.
        FileHandle.standardOutput.write(Data("""
            APNs sandbox listening on https://\(host):\(boundPort)
              trust:        --apns-ca-file \(material.caCertificateFile)
              token auth:   --apns-key-file \(material.tokenKeyFile) --apns-key-id \(material.tokenKeyID) --apns-team-id \(material.teamID)
              cert auth:    --apns-cert-file \(material.clientPKCS12File) --apns-cert-password sandbox   (topic com.example.app)

            """.utf8))
        try await startBroadcastManagement(
            sandbox, pushPort: boundPort,
            port: broadcastManagementPort ?? Env["sandbox-broadcast-management-port"].flatMap({ Int($0) })
        )
        var webPush: WebPushSandbox?
        if let webpushPort = webpushPort ?? Env["sandbox-webpush-port"].flatMap({ Int($0) }) {
            let service = WebPushSandbox(host: host, port: webpushPort, stateDirectory: stateDirectory,
                                         logsMessages: logNotifications, logger: logger)
            let bound = try await service.start()
            webPush = service
            FileHandle.standardOutput.write(Data("""
                Web Push sandbox listening on https://\(host):\(bound)
                  subscriptions: curl --cacert \(material.caCertificateFile) -X POST https://\(host):\(bound)/_sandbox/webpush/subscriptions -d '{"count":1}'
                  received:      curl --cacert \(material.caCertificateFile) https://\(host):\(bound)/_sandbox/webpush/received
                  a worker's webpush app sends here with: ca_file: \(material.caCertificateFile), allow_private_endpoints: true, allowed_endpoint_ports: [\(bound)]

                """.utf8))
        }
        let fcm = try await startFCM(configuration, port: fcmPort ?? Env["sandbox-fcm-port"].flatMap({ Int($0) }), logger: logger)
        let service = SandboxService(sandbox: sandbox, webPush: webPush, fcm: fcm)
        let group = ServiceGroup(configuration: .init(services: [.init(service: service)], gracefulShutdownSignals: [.sigterm, .sigint], logger: logger))
        try await group.run()
        let statistics = sandbox.statistics()
        print("sandbox stopped: \(statistics.requests) requests, \(statistics.accepted) accepted, \(statistics.rejected) rejected")
    }

    static func parseTokenKey(_ text: String) throws -> SandboxTokenKey {
        let parts = text.split(separator: ":", maxSplits: 2).map(String.init)
        guard parts.count == 3, let pem = FileManager.default.contents(atPath: parts[2]) else {
            throw ValidationError("--token-key must be KEYID:TEAMID:PATH with a readable PATH, got \"\(text)\"")
        }
        return SandboxTokenKey(keyID: parts[0], teamID: parts[1], publicKeyPEM: String(decoding: pem, as: UTF8.self))
    }
}

/// Keeps the sandbox up until the process is asked to stop.
private struct SandboxService: Service {
    let sandbox: APNsSandbox
    let webPush: WebPushSandbox?
    let fcm: FCMSandbox?

    func run() async throws {
        try? await gracefulShutdown()
        await sandbox.stop()
        await webPush?.stop()
        await fcm?.stop()
    }
}
