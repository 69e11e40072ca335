import Foundation
import Logging
import Sandbox

extension SandboxCommand {
    /// `--fcm-port`: the sandbox's FCM service beside the APNs one, sharing its state directory (and
    /// CA) and faults; APNs' rules are not FCM's (script FCM errors with PUT /_sandbox/rules on its port).
    func startFCM(_ apns: SandboxConfiguration, port: Int?, logger: Logger) async throws -> FCMSandbox? {
        guard let port else { return nil }
        var configuration = apns
        configuration.port = port
        configuration.rules = []
        // FCM's own limit: about 100 streams per connection, enforced with GOAWAY.
        configuration.maxConcurrentStreams = 100
        var fcm = FCMSandboxConfiguration()
        fcm.projectID = fcmProjectID
        fcm.clockOffset = .seconds(fcmClockOffset)
        let sandbox = FCMSandbox(configuration: configuration, fcm: fcm, logger: logger)
        let bound = try await sandbox.start()
        // Unbuffered: scripts wait for these lines.
        FileHandle.standardOutput.write(Data("""
            FCM sandbox listening on https://\(host):\(bound) (project \(fcmProjectID))
              service account: \(sandbox.fcmMaterial.serviceAccountFile)   (token_uri \(sandbox.tokenURI ?? "?"))
              received:        curl --cacert \(sandbox.material.caCertificateFile) https://\(host):\(bound)/_sandbox/received

            """.utf8))
        return sandbox
    }
}
