import PushCore
import PushTransport

extension APNsClient {
    /// ExpiredProviderToken: mints a new JWT (if APNs' 20-minute rule allows) and resends those
    /// devices once through `resend` (given their indices in `results`; each keeps its apns-id),
    /// putting its answers in their place. A device whose token could not be renewed, or that is
    /// refused again, becomes a credentials problem: the job waits for working credentials.
    /// Returns how many devices were resent.
    public func renewCredentialsAndResend(_ results: inout [PushResult], resend: ([Int]) async -> [PushResult]) async -> Int {
        let stale = results.indices.filter { results[$0].asksForNewCredentials }
        guard !stale.isEmpty, let provider = tokenProvider else { return 0 }
        guard (try? provider.refreshAfterRejection()) ?? false else {
            for index in stale { results[index].outcome = Self.credentialsProblem(results[index]) }
            return 0
        }
        let again = await resend(stale)
        for (index, result) in zip(stale, again) {
            results[index] = result
            if result.asksForNewCredentials { results[index].outcome = Self.credentialsProblem(result) }
        }
        return stale.count
    }

    private static func credentialsProblem(_ result: PushResult) -> DeliveryOutcome {
        .credentialsProblem(reason: result.reason ?? "ExpiredProviderToken")
    }
}
