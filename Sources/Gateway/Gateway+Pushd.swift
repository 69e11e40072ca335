import Foundation
import GatewayCore

/// pushd's packets (PushdListener): a registration becomes an SADD to the pushd app's group, a
/// notification a job published with confirms. A packet that cannot be read is logged and
/// counted; nothing is answered (pushd answered nothing either).
extension Gateway {
    func handlePushd(_ port: PushdListener.Port, _ bytes: [UInt8]) async {
        counters.add { $0.pushdPackets += 1 }
        let configuration = self.configuration
        let app = configuration.settings.pushdApp
        switch port {
        case .registration:
            let registration: PushdRegistration
            do { registration = try PushdPacket.registration(bytes) } catch {
                return malformed(port, error.message, bytes: bytes.count)
            }
            do throws(GatewayAnswer) {
                let key = try configuration.groups.key(app: app, group: registration.group)
                _ = try await configuration.groups.add([.init(identity: registration.device, given: registration.device)], to: key)
                counters.add { $0.pushdPublished += 1 }
            } catch {
                counters.add { $0.pushdFailed += 1 }
                logger.warning("pushd registration not stored", metadata: ["group": "\(registration.group)", "error": "\(error.message)"])
            }
        case .notification:
            let id = UUID().uuidString.lowercased()
            let job: [UInt8]
            do { job = try PushdPacket.notificationJob(bytes, app: app, jobID: id) } catch {
                return malformed(port, error.message, bytes: bytes.count)
            }
            do throws(GatewayAnswer) {
                _ = try configuration.jobs.check(job, key: nil)
                try await publisher.publish(body: job, id: id)
                counters.add { $0.pushdPublished += 1 }
            } catch {
                counters.add { $0.pushdFailed += 1 }
                logger.warning("pushd notification not published", metadata: ["job_id": "\(id)", "error": "\(error.message)"])
            }
        }
    }

    private func malformed(_ port: PushdListener.Port, _ problem: String, bytes: Int) {
        counters.add { $0.pushdMalformed += 1 }
        logger.warning("pushd packet refused", metadata: ["port": "\(port.rawValue)", "bytes": "\(bytes)", "problem": "\(problem)"])
    }
}
