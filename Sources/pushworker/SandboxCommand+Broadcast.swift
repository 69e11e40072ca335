import Foundation
import Sandbox

extension SandboxCommand {
    /// `--broadcast-management-port`: APNs' channel-management API (api-manage-broadcast.push.apple.com)
    /// beside the sandbox's push port, with the same TLS identity and authentication. Broadcasts
    /// themselves go to the push port (`POST /4/broadcasts/apps/<bundle ID>`), as at Apple.
    func startBroadcastManagement(_ sandbox: APNsSandbox, pushPort: Int, port: Int?) async throws {
        guard let port else { return }
        let bound = try await sandbox.startChannelManagement(host: host, port: port)
        let material = sandbox.material
        // The examples use the generated client certificate: unlike a provider token, it does not expire.
        let curl = "curl --http2 --cacert \(material.caCertificateFile) --cert \(material.clientCertificateFile) --key \(material.clientPrivateKeyFile)"
        // Unbuffered: scripts wait for these lines.
        FileHandle.standardOutput.write(Data("""
            APNs channel management listening on https://\(host):\(bound)
              create:    \(curl) -i -d '{"message-storage-policy":1,"push-type":"LiveActivity"}' https://\(host):\(bound)/1/apps/com.example.app/channels
              list:      \(curl) https://\(host):\(bound)/1/apps/com.example.app/all-channels
              broadcast: \(curl) -H 'apns-channel-id: <id>' -H 'apns-push-type: liveactivity' -H 'apns-expiration: 0' \
            -d '{"aps":{"event":"update","timestamp":1700000000,"content-state":{}}}' https://\(host):\(pushPort)/4/broadcasts/apps/com.example.app

            """.utf8))
    }
}
