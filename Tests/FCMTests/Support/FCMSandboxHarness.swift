import FCM
import FCMCore
import Foundation
import HTTP2
import Logging
import PushCore
import PushTransport
import Sandbox

/// An FCM-mode sandbox on an ephemeral loopback port with its own state directory, and the clients
/// the tests talk to it with. Scoped: `withFCMSandbox { harness in … }` stops and removes it.
struct FCMSandboxHarness {
    let sandbox: FCMSandbox
    let port: Int
    let directory: String

    var serviceAccountFile: String { sandbox.fcmMaterial.serviceAccountFile }
    var caFile: String { sandbox.material.caCertificateFile }
    var sendPath: String { "/v1/projects/pushworker-sandbox/messages:send" }

    static var logger: Logger {
        var logger = Logger(label: "fcm-test")
        logger.logLevel = .warning
        return logger
    }

    func makeClient() throws -> FCMClient {
        try FCMClient(serviceAccountFile: serviceAccountFile, url: "https://127.0.0.1:\(port)", extraCAFile: caFile, logger: Self.logger)
    }

    /// A client whose wall clock (the assertion's `iat`) is `clock`'s.
    func makeClient(clock: FCMAccessTokenSource.Clock) throws -> FCMClient {
        var configuration = try FCMConfiguration(serviceAccountFile: serviceAccountFile, url: "https://127.0.0.1:\(port)")
        configuration.extraCAFile = caFile
        return try FCMClient(configuration: configuration, logger: Self.logger, clock: clock)
    }

    /// A plain HTTP/2 client to the sandbox, for requests FCMClient would never make.
    func makeRawClient() -> HTTP2Client {
        var configuration = HTTP2ClientConfiguration(host: "127.0.0.1", port: port)
        configuration.extraCAFile = caFile
        configuration.useSystemCAStore = false
        configuration.requestTimeout = .seconds(20)
        return HTTP2Client(configuration: configuration, logger: Self.logger)
    }
}

func withFCMSandbox<T>(_ configure: (inout FCMSandboxConfiguration) -> Void = { _ in }, sandbox configureSandbox: (inout SandboxConfiguration) -> Void = { _ in },
                       _ body: (FCMSandboxHarness) async throws -> T) async throws -> T {
    let directory = FileManager.default.temporaryDirectory.appendingPathComponent("fcm-sandbox-\(UUID().uuidString)").path
    var configuration = SandboxConfiguration()
    configuration.port = 0
    configuration.stateDirectory = directory
    configuration.threads = 1
    configureSandbox(&configuration)
    var fcm = FCMSandboxConfiguration()
    configure(&fcm)
    let sandbox = FCMSandbox(configuration: configuration, fcm: fcm, logger: FCMSandboxHarness.logger)
    let port = try await sandbox.start()
    let harness = FCMSandboxHarness(sandbox: sandbox, port: port, directory: directory)
    do {
        let result = try await body(harness)
        await sandbox.stop()
        try? FileManager.default.removeItem(atPath: directory)
        return result
    } catch {
        await sandbox.stop()
        try? FileManager.default.removeItem(atPath: directory)
        throw error
    }
}

extension FCMClient {
    func send(_ job: PushJob, to token: String) async -> PushResult {
        await withCheckedContinuation { continuation in
            send(job, to: DeviceToken(identity: token, given: token), requestID: "r") { continuation.resume(returning: $0) }
        }
    }
}

/// A job of `payload` for FCM, parsed as the worker parses it.
func fcmJob(_ payload: String = #"{"notification":{"title":"Hi","body":"there"},"data":{"k":"v"}}"#, fields: String = "",
            token: String = "device-0000000000000001") throws -> PushJob {
    try JobParser.fcm.parse(Array(#"{"id":"job-1",\#(fields)"tokens":["\#(token)"],"payload":\#(payload)}"#.utf8), messageID: nil,
                            now: Int(Date().timeIntervalSince1970), makeID: { "made" })
}
