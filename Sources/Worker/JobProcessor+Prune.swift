import PushCore

/// An app's `prune_invalid_tokens` (pushd removed a device on 410): a token the platform calls invalid is
/// removed from the groups the job's devices came from, and its `token.invalid` event names them.
/// Where a token came from is not carried per device: SREM on a group that does not hold it
/// removes nothing, and its answer says which groups did. Jobs that name no group (the one-token
/// path) never get here.
extension JobProcessor {
    func prunes(_ settlement: Settlement) -> Bool {
        guard settlement.counts.invalid > 0, !settlement.job.prunableGroups.isEmpty else { return false }
        return roster.app(settlement.job.app)?.pruneInvalidTokens == true
    }

    /// Redis trouble leaves the remaining events as they are (logged): the application still
    /// hears of every invalid token, and can remove it itself.
    func pruneInvalidTokens(_ settlement: inout Settlement, log: JobLog) async {
        let job = settlement.job
        var removed = 0
        for index in settlement.events.indices {
            guard case let .tokenInvalid(token, reason, status, timestamp, requestID, isAPNsID, _) = settlement.events[index] else { continue }
            var removedFrom: [String] = []
            for group in job.prunableGroups {
                do {
                    if try await redis.setRemove(key: configuration.groupKey(app: job.app, group: group), members: [token]) > 0 {
                        removedFrom.append(group)
                    }
                } catch {
                    log.logger.warning("could not remove invalid tokens from their groups; their events go out without it",
                                       metadata: [LogKeys.error: "\(error)"])
                    return
                }
            }
            removed += removedFrom.count
            settlement.events[index] = .tokenInvalid(token: token, reason: reason, status: status, timestamp: timestamp,
                                                     requestID: requestID, isAPNsID: isAPNsID, prunedFrom: removedFrom)
        }
        if removed > 0 {
            log.logger.info("invalid tokens removed from their groups", metadata: ["push.group_members_removed": "\(removed)"])
        }
    }
}
