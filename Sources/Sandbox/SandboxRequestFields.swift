import NIOHTTP2

/// The headers the sandbox looks at, read in one pass (HTTP/2 header names are lowercase).
struct SandboxRequestFields {
    var method: String?
    var path: String?
    var authorization: String?
    var topic: String?
    var pushType: String?
    var priority: String?
    var expiration: String?
    var apnsID: String?
    var collapseID: String?
    var channelID: String?
    var requestID: String?
    /// Other `apns-*` headers, only to spot duplicates among them.
    var otherAPNsHeaders: [String] = []
    var duplicated = false

    /// `:path` without its query. Byte-level scan: with Foundation loaded, `firstIndex(of: "?")`
    /// on the String would go through CFString.
    var route: Substring {
        let path = self.path ?? ""
        return path[..<(path.utf8.firstIndex(of: UInt8(ascii: "?")) ?? path.endIndex)]
    }

    mutating func read(_ frame: HTTP2Frame.FramePayload.Headers) {
        for (name, value, _) in frame.headers {
            switch name {
            case ":method": self.method = value
            case ":path": self.path = value
            case "authorization": Self.set(&self.authorization, value, &self.duplicated)
            case "apns-topic": Self.set(&self.topic, value, &self.duplicated)
            case "apns-push-type": Self.set(&self.pushType, value, &self.duplicated)
            case "apns-priority": Self.set(&self.priority, value, &self.duplicated)
            case "apns-expiration": Self.set(&self.expiration, value, &self.duplicated)
            case "apns-id": Self.set(&self.apnsID, value, &self.duplicated)
            case "apns-collapse-id": Self.set(&self.collapseID, value, &self.duplicated)
            case "apns-channel-id": Self.set(&self.channelID, value, &self.duplicated)
            case "apns-request-id": Self.set(&self.requestID, value, &self.duplicated)
            default:
                if name.hasPrefix("apns-") {
                    if self.otherAPNsHeaders.contains(name) { self.duplicated = true }
                    self.otherAPNsHeaders.append(name)
                }
            }
        }
    }

    private static func set(_ field: inout String?, _ value: String, _ duplicated: inout Bool) {
        if field != nil { duplicated = true }
        field = value
    }
}
