import PushCore

extension APNsPayload {
    /// `aps.sound`: a sound file's name (`default` for the system sound), or a critical alert's
    /// dictionary `{"critical": 1, "name": …, "volume": 0…1}`.
    public enum Sound: Sendable, Hashable, ExpressibleByStringLiteral {
        case named(String)
        /// Plays even in silent mode and Do Not Disturb (the app needs Apple's entitlement).
        case critical(name: String, volume: Double? = nil)

        public static let `default` = Sound.named("default")

        public init(stringLiteral value: String) {
            self = .named(value)
        }

        var json: JSONValue {
            switch self {
            case .named(let name): .string(name)
            case .critical(let name, let volume):
                .object(["critical": .int(1), "name": .string(name)].merging(volume.map { ["volume": .double($0)] } ?? [:]) { first, _ in first })
            }
        }
    }
}
