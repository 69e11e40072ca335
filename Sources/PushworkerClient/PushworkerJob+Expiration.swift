import Foundation
import PushCore

extension PushworkerJob {
    /// The job's `expiration`: until when the platform may keep trying to deliver.
    public enum Expiration: Sendable, Hashable {
        /// `0`: one attempt now, never stored by the platform.
        case now
        /// Absolute UNIX seconds.
        case unixTime(Int)
        /// `"+N"`: N seconds after the worker reads the job (at most a year).
        case after(seconds: Int)

        public static func at(_ date: Date) -> Expiration {
            .unixTime(Int(date.timeIntervalSince1970.rounded(.down)))
        }

        public static func after(_ duration: Duration) -> Expiration {
            .after(seconds: Int(duration.components.seconds))
        }

        var json: JSONValue {
            switch self {
            case .now: .int(0)
            case .unixTime(let seconds): .int(Int64(seconds))
            case .after(let seconds): .string("+\(seconds)")
            }
        }

        /// The worker's limits (a relative expiration at most a year, no negative times).
        func check() throws(PushworkerJobError) {
            switch self {
            case .now: return
            case .unixTime(let seconds) where seconds < 0:
                throw PushworkerJobError(field: "expiration", "must be UNIX seconds (not negative), got \(seconds)")
            case .after(let seconds) where seconds < 0 || seconds > 366 * 86400:
                throw PushworkerJobError(field: "expiration", "\"+N\" must be 0…\(366 * 86400) seconds (at most a year), got \(seconds)")
            default: return
            }
        }
    }
}
