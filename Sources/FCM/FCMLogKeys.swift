/// Log metadata keys of the FCM module, in one place.
enum FCMLogKeys {
    static let project = "fcm.project"
    static let serviceAccount = "fcm.service_account"
    static let tokenEndpoint = "fcm.token_endpoint"
    static let tokenLifetime = "fcm.access_token.lifetime_s"
    static let error = "fcm.error"
    /// Seconds the token endpoint's clock is ahead of this machine's (negative: behind).
    static let clockSkew = "fcm.clock_skew_s"
}
