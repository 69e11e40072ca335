import PushTransport

/// Channel-operation jobs through the app's client: its `APNsChannelManager` is made on first use
/// (a connection to the management host only for apps that use channels) and closed with it.
extension APNsClient: BroadcastChannelManaging {
    public func createChannel(storagePolicy: Int) async throws(ChannelManagementError) -> String {
        let manager = try channelManager()
        guard let policy = APNsChannelStoragePolicy(rawValue: storagePolicy) else {
            throw ChannelManagementError(status: 0, reason: "BadMessageStoragePolicy", description: "storage_policy must be 0 or 1")
        }
        do { return try await manager.create(storagePolicy: policy) } catch { throw Self.managementError(error) }
    }

    public func deleteChannel(_ id: String) async throws(ChannelManagementError) {
        let manager = try channelManager()
        do { try await manager.delete(id) } catch { throw Self.managementError(error) }
    }

    public func isChannelID(_ text: String) -> Bool { APNsChannelManager.isChannelID(text) }

    private func channelManager() throws(ChannelManagementError) -> APNsChannelManager {
        let made: Result<APNsChannelManager, APNsConfigurationError> = channelManagers.withLockedValue { manager in
            if let manager { return .success(manager) }
            do throws(APNsConfigurationError) {
                let new = try APNsChannelManager(configuration: configuration, logger: logger)
                manager = new
                return .success(new)
            } catch {
                return .failure(error)
            }
        }
        switch made {
        case let .success(manager): return manager
        case let .failure(error): throw ChannelManagementError(status: 0, reason: "Configuration", description: error.message)
        }
    }

    private static func managementError(_ error: APNsChannelError) -> ChannelManagementError {
        ChannelManagementError(status: error.status, reason: error.reason, description: error.description)
    }
}
