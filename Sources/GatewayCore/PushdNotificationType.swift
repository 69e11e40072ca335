/// pushd's notification `type` (its README), as an APNs push type and priority.
enum PushdNotificationType: String, CaseIterable {
    case background, normal, urgent

    var pushType: String { self == .background ? "background" : "alert" }

    /// APNs refuses priority 10 for background pushes; "normal" is an alert at 5.
    var priority: Int { self == .urgent ? 10 : 5 }
}
