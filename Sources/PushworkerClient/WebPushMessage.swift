import PushCore

/// What a browser's service worker receives (`event.data.json()`): any JSON object. The worker
/// encrypts it for each subscription.
public struct WebPushMessage: Sendable, Hashable {
    public var payload: [String: JSONValue]

    public init(_ payload: [String: JSONValue]) {
        self.payload = payload
    }

    /// The Declarative Web Push marker (Safari 18.4+): with it, the browser shows `notification`
    /// itself, without a service worker.
    public static let declarativeMarker = 8030

    /// A Declarative Web Push message: `{"web_push": 8030, "notification": {"title": …,
    /// "navigate": …, …}}`. `additional` adds members to `notification` (`tag`, `app_badge`, …).
    public static func declarative(title: String, navigate: String, body: String? = nil, lang: String? = nil,
                                   dir: String? = nil, silent: Bool? = nil, additional: [String: JSONValue] = [:]) -> WebPushMessage {
        var notification = additional
        notification["title"] = .string(title)
        notification["navigate"] = .string(navigate)
        notification["body"] = body.map(JSONValue.string)
        notification["lang"] = lang.map(JSONValue.string)
        notification["dir"] = dir.map(JSONValue.string)
        notification["silent"] = silent.map(JSONValue.bool)
        return WebPushMessage(["web_push": .int(Int64(declarativeMarker)), "notification": .object(notification)])
    }

    func jsonObject() -> JSONObjectWriter {
        var writer = JSONObjectWriter()
        // The marker first, as WebKit's examples write it.
        if let marker = payload["web_push"] { writer.member("web_push", marker) }
        writer.members(payload.filter { $0.key != "web_push" })
        return writer
    }
}
