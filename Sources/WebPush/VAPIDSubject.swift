/// The VAPID `sub` claim: how the push service can reach the sender (RFC 8292 §2.1). Checked when
/// configured, because Apple's service answers 403 BadJwtToken to a `sub` with spaces, angle
/// brackets or `localhost`, and the sender would only learn it from every message failing.
public struct VAPIDSubject: Sendable, Hashable, CustomStringConvertible {
    public let value: String

    /// - Parameter text: a `mailto:` address (`mailto:push@example.com`) or an `https:` URL.
    public init(_ text: String) throws(WebPushError) {
        func refuse(_ problem: String) -> WebPushError {
            WebPushError(.invalidVAPIDSubject, field: "vapid.subject", problem)
        }
        if let bad = text.unicodeScalars.first(where: { $0 == " " || $0 == "<" || $0 == ">" || $0.value < 0x21 || $0.value > 0x7E }) {
            switch bad {
            case " ": throw refuse("must not contain spaces")
            case "<", ">": throw refuse("must not contain angle brackets (write mailto:push@example.com, not <push@example.com>)")
            default: throw refuse("must be printable ASCII (percent-encode other characters)")
            }
        }
        let host: Substring
        if text.hasPrefix("mailto:") {
            let address = text.dropFirst("mailto:".count).prefix { $0 != "?" }
            guard let at = address.lastIndex(of: "@"), at != address.startIndex, address.index(after: at) != address.endIndex else {
                throw refuse("mailto: needs an address (mailto:push@example.com)")
            }
            host = address[address.index(after: at)...]
        } else if text.hasPrefix("https://") {
            var authority = text.dropFirst("https://".count).prefix { $0 != "/" && $0 != "?" && $0 != "#" }
            if let at = authority.lastIndex(of: "@") { authority = authority[authority.index(after: at)...] }
            if authority.hasPrefix("[") {
                host = authority.prefix { $0 != "]" }.dropFirst()
            } else {
                host = authority.prefix { $0 != ":" }
            }
            guard !host.isEmpty else { throw refuse("the https: URL needs a host") }
        } else {
            throw refuse("must be a mailto: or https: URL (mailto:push@example.com)")
        }
        let name = host.lowercased()
        let bare = name.hasSuffix(".") ? String(name.dropLast()) : name
        guard bare != "localhost", !bare.hasSuffix(".localhost") else {
            throw refuse("must not name localhost: push services refuse it; give an address they can reach")
        }
        value = text
    }

    public var description: String { value }
}
