import NIOConcurrencyHelpers

/// The broadcast channels of one sandbox: the channel-management listener creates, reads and
/// deletes them, the push listener sends on them. Bounded like everything filled from the network:
/// APNs' 10,000 channels per app, and a cap on apps so that invented bundle IDs cannot grow it.
final class SandboxChannels: Sendable {
    /// Apple's limit per bundle ID.
    static let maximumPerBundle = 10_000
    /// The sandbox's own: far more apps than a test or a CI run uses.
    static let maximumBundles = 1_000

    enum CreateFailure: Error, Equatable {
        case tooManyChannels
        case tooManyBundleIDs
    }

    /// bundle ID → channel ID → message storage policy.
    private let state = NIOLockedValueBox<[String: [String: Int]]>([:])

    /// A new channel's ID.
    func create(bundleID: String, storagePolicy: Int) -> Result<String, CreateFailure> {
        self.state.withLockedValue { bundles in
            let channels = bundles[bundleID] ?? [:]
            if channels.isEmpty, bundles.count >= Self.maximumBundles { return .failure(.tooManyBundleIDs) }
            guard channels.count < Self.maximumPerBundle else { return .failure(.tooManyChannels) }
            var id = SandboxChannelID.generate()
            while channels[id] != nil { id = SandboxChannelID.generate() }
            bundles[bundleID, default: [:]][id] = storagePolicy
            return .success(id)
        }
    }

    /// The channel's message storage policy; nil when no such channel exists for that bundle ID.
    func storagePolicy(bundleID: String, channelID: String) -> Int? {
        self.state.withLockedValue { $0[bundleID]?[channelID] }
    }

    /// False when there was no such channel.
    func delete(bundleID: String, channelID: String) -> Bool {
        self.state.withLockedValue { bundles in
            guard bundles[bundleID]?.removeValue(forKey: channelID) != nil else { return false }
            // An app without channels no longer counts towards the cap on apps.
            if bundles[bundleID]?.isEmpty == true { bundles[bundleID] = nil }
            return true
        }
    }

    /// Channel ID → message storage policy.
    func channels(bundleID: String) -> [String: Int] {
        self.state.withLockedValue { $0[bundleID] ?? [:] }
    }
}
