import PushCore

extension APNsPayload {
    /// `aps.alert`: a plain string, or the dictionary with title, body and their localization keys.
    public enum Alert: Sendable, Hashable, ExpressibleByStringLiteral {
        case text(String)
        case content(Content)

        public init(stringLiteral value: String) {
            self = .text(value)
        }

        /// The alert dictionary; nil members are left out.
        public static func content(title: String? = nil, subtitle: String? = nil, body: String? = nil,
                                   titleLocKey: String? = nil, titleLocArgs: [String]? = nil,
                                   subtitleLocKey: String? = nil, subtitleLocArgs: [String]? = nil,
                                   locKey: String? = nil, locArgs: [String]? = nil, launchImage: String? = nil) -> Alert {
            .content(Content(title: title, subtitle: subtitle, body: body, titleLocKey: titleLocKey, titleLocArgs: titleLocArgs,
                             subtitleLocKey: subtitleLocKey, subtitleLocArgs: subtitleLocArgs, locKey: locKey, locArgs: locArgs,
                             launchImage: launchImage))
        }

        public struct Content: Sendable, Hashable {
            public var title: String?
            public var subtitle: String?
            public var body: String?
            public var titleLocKey: String?
            public var titleLocArgs: [String]?
            public var subtitleLocKey: String?
            public var subtitleLocArgs: [String]?
            public var locKey: String?
            public var locArgs: [String]?
            public var launchImage: String?

            public init(title: String? = nil, subtitle: String? = nil, body: String? = nil,
                        titleLocKey: String? = nil, titleLocArgs: [String]? = nil,
                        subtitleLocKey: String? = nil, subtitleLocArgs: [String]? = nil,
                        locKey: String? = nil, locArgs: [String]? = nil, launchImage: String? = nil) {
                self.title = title
                self.subtitle = subtitle
                self.body = body
                self.titleLocKey = titleLocKey
                self.titleLocArgs = titleLocArgs
                self.subtitleLocKey = subtitleLocKey
                self.subtitleLocArgs = subtitleLocArgs
                self.locKey = locKey
                self.locArgs = locArgs
                self.launchImage = launchImage
            }

            var json: JSONValue {
                var members = [String: JSONValue]()
                members["title"] = title.map(JSONValue.string)
                members["subtitle"] = subtitle.map(JSONValue.string)
                members["body"] = body.map(JSONValue.string)
                members["title-loc-key"] = titleLocKey.map(JSONValue.string)
                members["title-loc-args"] = titleLocArgs.map { .array($0.map(JSONValue.string)) }
                members["subtitle-loc-key"] = subtitleLocKey.map(JSONValue.string)
                members["subtitle-loc-args"] = subtitleLocArgs.map { .array($0.map(JSONValue.string)) }
                members["loc-key"] = locKey.map(JSONValue.string)
                members["loc-args"] = locArgs.map { .array($0.map(JSONValue.string)) }
                members["launch-image"] = launchImage.map(JSONValue.string)
                return .object(members)
            }
        }

        var json: JSONValue {
            switch self {
            case .text(let text): .string(text)
            case .content(let content): content.json
            }
        }
    }
}
