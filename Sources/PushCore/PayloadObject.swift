/// A job's payload as it will be sent (compact, already checked by `JSONParser`), read member by
/// member when a platform's rules ask (APNs: `aps`). Building the whole payload as dictionaries,
/// which the rules never read but for one member, was a large part of parsing a job (measured:
/// docs/evidence/code-measurements.md#payload-object).
public struct PayloadObject: Sendable {
    /// The payload's bytes, as sent.
    public let bytes: [UInt8]

    public init(bytes: [UInt8]) {
        self.bytes = bytes
    }

    /// The member `key`'s type and, for an object, its member names (the last, if repeated); nil
    /// when absent. Nothing else is built.
    public func shape(of key: String) -> JSONShape? {
        // The bytes were checked when the job was parsed: reading them again cannot fail.
        (try? JSONParser.shape(ofMember: key, in: bytes)) ?? nil
    }

    /// The member `key` (the last, if repeated), fully parsed; nil when absent.
    public subscript(_ key: String) -> JSONValue? {
        // The bytes were checked when the job was parsed: reading them again cannot fail.
        (try? JSONParser.member(named: key, of: bytes)) ?? nil
    }
}
