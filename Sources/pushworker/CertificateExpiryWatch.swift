import Foundation
import Logging
import ServiceLifecycle
import WorkerConfigurationFile

/// Warns, at start and then once a day, about each app certificate that ends within 30 days:
/// a worker runs for weeks, and an expired certificate fails every notification of its app.
struct CertificateExpiryWatch: Service {
    let certificates: [CertificateExpiry]
    let logger: Logger
    var interval: Duration = .seconds(86_400)

    func run() async throws {
        await cancelWhenGracefulShutdown {
            while !Task.isCancelled {
                let now = Date()
                for certificate in certificates {
                    guard let warning = certificate.warning(now: now) else { continue }
                    logger.warning("app certificate expires soon", metadata: ["app": "\(certificate.app)", "problem": "\(warning)"])
                }
                do { try await Task.sleep(for: interval) } catch { return }
            }
        }
    }
}
