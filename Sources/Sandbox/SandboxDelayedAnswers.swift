import NIOCore
import NIOHTTP2

/// Answers held back by the configured latency, in due order. Due times are rounded up to the next
/// millisecond so that everything due in one millisecond goes out on one timer and in one flush
/// (one TLS record) instead of a timer and a write per response: latency is never shorter than asked,
/// at most a millisecond longer.
struct SandboxDelayedAnswers {
    struct Answer {
        let streamID: HTTP2StreamID
        let status: Int
        let reason: String?
        let apnsID: String
        /// Answered with `apns-request-id` instead of `apns-id`.
        let isBroadcast: Bool
        let uniqueID: String
        let goAway: Bool
    }

    private var answers = CircularBuffer<(due: NIODeadline, answer: Answer)>(initialCapacity: 64)

    var isEmpty: Bool { self.answers.isEmpty }
    var nextDue: NIODeadline? { self.answers.first?.due }

    static func due(after latency: TimeAmount, now: NIODeadline = .now()) -> NIODeadline {
        let millisecond: UInt64 = 1_000_000
        let target = now.uptimeNanoseconds + UInt64(max(0, latency.nanoseconds))
        return .uptimeNanoseconds((target + millisecond - 1) / millisecond * millisecond)
    }

    /// Keeps due order. The latency only changes when a test or an operator sets it, so this is
    /// almost always an append.
    mutating func insert(_ answer: Answer, due: NIODeadline) {
        // CircularBuffer's insert(at:) rebuilds the whole buffer, even at the end.
        if self.answers.last.map({ $0.due <= due }) ?? true {
            self.answers.append((due, answer))
            return
        }
        var index = self.answers.endIndex
        while index > self.answers.startIndex {
            let before = self.answers.index(before: index)
            if self.answers[before].due <= due { break }
            index = before
        }
        self.answers.insert((due, answer), at: index)
    }

    /// Removes and returns the first answer if it is due by `now`.
    mutating func popDue(by now: NIODeadline) -> Answer? {
        guard let first = self.answers.first, first.due <= now else { return nil }
        return self.answers.removeFirst().answer
    }
}
