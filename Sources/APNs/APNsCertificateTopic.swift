import HTTP2

/// The topic a certificate-authenticated worker sends (Apple, "Establishing a certificate-based connection to APNs"): the one given, if the
/// certificate covers it; otherwise the certificate's bundle ID. Checked at startup, so a topic
/// the certificate does not cover fails once, not as TopicDisallowed for every device.
public enum APNsCertificateTopic {
    /// `option` is how the topic is named in messages: `--apns-topic`, or a field of the configuration file.
    public static func resolve(given: String?, certificate: CertificateSummary, option: String = "--apns-topic") throws(APNsConfigurationError) -> String {
        guard let given else {
            guard let bundleID = certificate.bundleID else {
                throw APNsConfigurationError("\(option) is required: the certificate names no bundle ID (no UID in its subject)")
            }
            return bundleID
        }
        if !certificate.topics.isEmpty, !certificate.topics.contains(given) {
            throw APNsConfigurationError("\(option) \(given) is not among the certificate's topics (\(certificate.topics.joined(separator: ", "))): APNs would answer TopicDisallowed for every notification")
        }
        return given
    }
}
