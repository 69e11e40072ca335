import PushCore
import Redis

/// `groups import`: streams a token file into a group. Each line is checked with the platform's
/// rules; bad lines are reported by number and skipped; the good tokens go to Redis as SADDs of
/// `batchSize` members, `pipelineDepth` of them in one round trip, and the next round is read and
/// checked while Redis answers the last. SADD is idempotent: an import cut short can simply be run
/// again.
public struct GroupImport: Sendable {
    public let redis: RedisClient
    public let key: String
    public let rules: any PlatformJobRules
    public var batchSize = 1000
    public var pipelineDepth = 16
    static let linesPerProgress = 16_384

    public init(redis: RedisClient, key: String, rules: any PlatformJobRules) {
        self.redis = redis
        self.key = key
        self.rules = rules
    }

    public func run(_ reader: inout LineReader, onBadLine: (BadLine) -> Void,
                    onProgress: (ImportProgress) -> Void = { _ in }) async throws(OperationError) -> ImportSummary {
        var summary = ImportSummary()
        var round: [[String]] = []
        var batch: [String] = []
        batch.reserveCapacity(batchSize)
        var inFlight: Task<Result<Int, RedisError>, Never>?
        // The round sent last is awaited before the next goes out, and before any return.
        func settle() async throws(OperationError) {
            guard let sending = inFlight else { return }
            inFlight = nil
            switch await sending.value {
            case .success(let added): summary.added += added
            case .failure(let error):
                throw OperationError("\(key): \(error) after line \(summary.lines) (\(summary.added) devices added before; SADD is idempotent, so running the import again is safe)")
            }
        }
        func send() async throws(OperationError) {
            if !batch.isEmpty {
                round.append(batch)
                batch.removeAll(keepingCapacity: true)
            }
            guard !round.isEmpty else { return }
            try await settle()
            let batches = round
            round = []
            inFlight = Task { [redis, key] in
                do throws(RedisError) { return .success(try await redis.setAdd(key: key, batches: batches)) } catch { return .failure(error) }
            }
        }
        do {
            while let line = try reader.next() {
                summary.lines += 1
                switch line {
                case .tooLong(let bytes):
                    summary.bad += 1
                    onBadLine(BadLine(number: summary.lines, problem: "the line is \(bytes) bytes; no device is longer than \(LineReader.maxLineBytes)"))
                case .text(let text):
                    switch TokenLine(text, rules: rules) {
                    case .blank: summary.blank += 1
                    case .bad(let problem):
                        summary.bad += 1
                        onBadLine(BadLine(number: summary.lines, problem: problem))
                    case .device(let device):
                        summary.devices += 1
                        // Stored as given, as `groups add` does: events name devices that way.
                        batch.append(device.given)
                        if batch.count == batchSize {
                            round.append(batch)
                            batch.removeAll(keepingCapacity: true)
                            if round.count == pipelineDepth { try await send() }
                        }
                    }
                }
                if summary.lines % Self.linesPerProgress == 0 {
                    onProgress(ImportProgress(summary: summary, bytesRead: reader.bytesRead, totalBytes: reader.totalBytes))
                }
            }
            try await send()
            try await settle()
        } catch {
            // A read error or a failed round: the round still out is awaited, never left running.
            _ = await inFlight?.value
            throw error
        }
        onProgress(ImportProgress(summary: summary, bytesRead: reader.bytesRead, totalBytes: reader.totalBytes))
        return summary
    }
}
