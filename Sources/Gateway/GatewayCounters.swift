import NIOConcurrencyHelpers
import PushCore

/// What the gateway has taken and refused since it started, for `/healthz` and the logs.
/// Counters are 64-bit and only ever added to; at a million requests a second they last 290,000 years.
struct GatewayCounts: Sendable {
    var jobsAccepted: Int64 = 0
    var jobsRefused: Int64 = 0
    var publishFailures: Int64 = 0
    var groupChanges: Int64 = 0
    var relayAccepted: Int64 = 0
    var relayRefused: Int64 = 0
    /// 429s of the relay's limits (`RelayAdmission`), apart from `relayRefused` (bad posts).
    var relayLimitedByAddress: Int64 = 0
    var relayLimitedByApp: Int64 = 0
    var pushdPackets: Int64 = 0
    var pushdMalformed: Int64 = 0
    var pushdPublished: Int64 = 0
    var pushdFailed: Int64 = 0
    var pushdDropped: Int64 = 0

    func write(to writer: inout JSONWriter) {
        writer.field("jobs_accepted", Int(jobsAccepted))
        writer.field("jobs_refused", Int(jobsRefused))
        writer.field("publish_failures", Int(publishFailures))
        writer.field("group_changes", Int(groupChanges))
        writer.field("relay_accepted", Int(relayAccepted))
        writer.field("relay_refused", Int(relayRefused))
        writer.field("relay_limited_by_address", Int(relayLimitedByAddress))
        writer.field("relay_limited_by_app", Int(relayLimitedByApp))
        writer.field("pushd_packets", Int(pushdPackets))
        writer.field("pushd_malformed", Int(pushdMalformed))
        writer.field("pushd_published", Int(pushdPublished))
        writer.field("pushd_failed", Int(pushdFailed))
        writer.field("pushd_dropped", Int(pushdDropped))
    }
}

final class GatewayCounters: Sendable {
    private let counts = NIOLockedValueBox(GatewayCounts())

    func add(_ change: (inout GatewayCounts) -> Void) { counts.withLockedValue(change) }
    var snapshot: GatewayCounts { counts.withLockedValue { $0 } }
}
