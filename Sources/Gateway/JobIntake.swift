import APNsCore
import FCMCore
import Foundation
import PushCore
import WebPushCore
import PlatformCatalog

/// Reads a job as the worker will (the same parser and platform rules), so that a job the
/// gateway accepted is never dead-lettered for its content.
struct JobIntake: Sendable {
    let parser = JobParser(platforms: Platform.allJobRules)
    let apps: [String: Platform]

    struct Accepted: Sendable {
        let id: String
        let app: String
        let devices: Int
        let groups: Int
    }

    /// The job checked, or a 400 naming the field and the problem (403 for an app the key may not use).
    func check(_ body: [UInt8], key: APIKeyring.Key?) throws(GatewayAnswer) -> Accepted {
        let apps = self.apps
        // Set when the key may not use the job's app: that answer is a 403, not a 400.
        var forbidden = false
        do throws(JobRejection) {
            let job = try parser.parse(body, messageID: nil, now: Int(Date().timeIntervalSince1970),
                                       makeID: { UUID().uuidString.lowercased() }) { (app: String) throws(JobRejection) in
                guard let platform = apps[app] else {
                    throw JobRejection(field: "app", "unknown app \"\(app)\" (this gateway knows: \(apps.keys.sorted().joined(separator: ", ")))")
                }
                if let key, !key.allows(app: app) {
                    forbidden = true
                    throw JobRejection(field: "app", "this API key may not send to app \"\(app)\"")
                }
                return platform.jobRules
            }
            return Accepted(id: job.id, app: job.app, devices: job.tokens.count, groups: job.groups.count)
        } catch {
            if forbidden, let key {
                throw GatewayAnswer.error(403, "API key \(key.name) may not send to this app", field: "app")
            }
            if error.field == ChannelOperation.field {
                throw GatewayAnswer.error(400, "channel operations go to POST /v1/channels/APP and DELETE /v1/channels/APP/ID", field: error.field)
            }
            throw GatewayAnswer.error(400, error.problem, field: error.field)
        }
    }
}
