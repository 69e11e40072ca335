extension PushworkerJob {
    /// Apple's `apns-push-type` values, as the job's `push_type` spells them. A struct rather than
    /// an enum: a push type Apple adds later is written with `init(rawValue:)` without waiting
    /// for this library.
    public struct APNsPushType: RawRepresentable, Sendable, Hashable, CustomStringConvertible {
        public let rawValue: String

        public init(rawValue: String) {
            self.rawValue = rawValue
        }

        public var description: String { rawValue }

        public static let alert = APNsPushType(rawValue: "alert")
        public static let background = APNsPushType(rawValue: "background")
        public static let location = APNsPushType(rawValue: "location")
        public static let voip = APNsPushType(rawValue: "voip")
        public static let complication = APNsPushType(rawValue: "complication")
        public static let fileprovider = APNsPushType(rawValue: "fileprovider")
        public static let mdm = APNsPushType(rawValue: "mdm")
        public static let liveactivity = APNsPushType(rawValue: "liveactivity")
        public static let pushtotalk = APNsPushType(rawValue: "pushtotalk")
        public static let widgets = APNsPushType(rawValue: "widgets")
        public static let controls = APNsPushType(rawValue: "controls")

        /// Every push type the worker knows today.
        public static let all: [APNsPushType] = [
            .alert, .background, .location, .voip, .complication, .fileprovider, .mdm, .liveactivity, .pushtotalk, .widgets, .controls,
        ]
    }
}
