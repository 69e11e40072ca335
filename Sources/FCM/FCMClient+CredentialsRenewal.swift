import PushCore
import PushTransport

extension FCMClient {
    /// FCM refused the access token (401 without an FcmError detail): the refused token was already
    /// dropped when its answer came (`FCMAccessTokenSource.rejected`), so this fetches a new one (or
    /// joins the fetch under way) and resends those devices once through `resend`, putting its
    /// answers in their place. A device refused again, or left without a token, becomes a
    /// credentials problem (or waits, when the token endpoint could not be reached).
    public func renewCredentialsAndResend(_ results: inout [PushResult], resend: ([Int]) async -> [PushResult]) async -> Int {
        let stale = results.indices.filter { results[$0].asksForNewCredentials }
        guard !stale.isEmpty else { return 0 }
        if case let .failure(error) = await tokens.accessToken() {
            let replacement = Self.result(for: error)
            for index in stale { results[index].outcome = replacement.outcome }
            return 0
        }
        let again = await resend(stale)
        for (index, result) in zip(stale, again) {
            results[index] = result
            if result.asksForNewCredentials {
                results[index].outcome = .credentialsProblem(reason: "FCM refused a freshly fetched access token of \(configuration.serviceAccount.clientEmail): \(result.reason ?? "UNAUTHENTICATED")")
            }
        }
        return stale.count
    }
}
