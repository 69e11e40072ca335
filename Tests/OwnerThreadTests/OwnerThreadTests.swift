import Foundation
import Glibc
import NIOConcurrencyHelpers
import OwnerThread
import Testing

@Suite("Owner threads and their wake signal")
struct OwnerThreadTests {
    /// What the started thread saw of itself.
    struct Observed: Sendable {
        var name = ""
        var sigpipeBlocked = false
    }

    @Test("the thread runs its body with SIGPIPE blocked and carries its name, cut to 15 bytes")
    func threadRunsBlockedAndNamed() async throws {
        let observed = NIOLockedValueBox<Observed?>(nil)
        await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
            do {
                try OwnerThread.start(name: "owner-thread-test-long-name") {
                    var current = sigset_t()
                    pthread_sigmask(SIG_BLOCK, nil, &current)
                    let path = "/proc/thread-self/comm"
                    let name = (try? String(contentsOfFile: path, encoding: .utf8)) ?? ""
                    observed.withLockedValue {
                        $0 = Observed(name: name.trimmingCharacters(in: .newlines), sigpipeBlocked: sigismember(&current, SIGPIPE) == 1)
                    }
                    done.resume()
                }
            } catch {
                Issue.record("\(error)")
                done.resume()
            }
        }
        let seen = try #require(observed.withLockedValue { $0 })
        #expect(seen.sigpipeBlocked)
        #expect(seen.name == "owner-thread-te")
    }

    @Test("a signal sent before the owner waits is not lost, and one drain clears many")
    func signalBeforeWaitIsKept() throws {
        let wake = try WakeSignal()
        var pair: [Int32] = [-1, -1]
        #expect(socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0, &pair) == 0)
        defer { close(pair[0]); close(pair[1]) }
        wake.signal()
        wake.signal()
        // An hour-long timeout: only the signal can end this wait (a lost one would hang the test).
        wake.wait(readable: pair[0], timeoutMilliseconds: 3_600_000)
        var count: UInt64 = 0
        #expect(read(wake.descriptor, &count, 8) == -1 && errno == EAGAIN, "the wait drained the signal")
    }

    @Test("a readable socket ends the wait and leaves the signal untouched")
    func readableSocketEndsTheWait() throws {
        let wake = try WakeSignal()
        var pair: [Int32] = [-1, -1]
        #expect(socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0, &pair) == 0)
        defer { close(pair[0]); close(pair[1]) }
        var byte: UInt8 = 7
        #expect(write(pair[1], &byte, 1) == 1)
        wake.wait(readable: pair[0], timeoutMilliseconds: 3_600_000)
        wake.signal()
        var count: UInt64 = 0
        #expect(read(wake.descriptor, &count, 8) == 8 && count == 1)
    }
}

@Suite("Owner inbox: one wake-up rule")
struct OwnerInboxTests {
    @Test("callers wake the owner only once it said it will block, and only the first of them")
    func wakesOnlyAWaitingOwner() {
        var inbox = OwnerInbox<Int>()
        let wokeWhileRunning = inbox.post(1)
        #expect(!wokeWhileRunning, "the owner runs: no wake-up")
        let mayBlockWithWorkWaiting = inbox.ownerWillWait()
        #expect(!mayBlockWithWorkWaiting, "work is waiting: the owner must not block")
        var taken: [Int] = []
        inbox.takeAll(into: &taken)
        #expect(taken == [1] && inbox.isEmpty)
        let mayBlock = inbox.ownerWillWait()
        #expect(mayBlock)
        let wokeBlockedOwner = inbox.post(2)
        #expect(wokeBlockedOwner, "the owner is blocking: wake it")
        let wokeAgain = inbox.post(3)
        #expect(!wokeAgain, "a wake-up is already on its way")
        #expect(inbox.count == 2)
    }

    @Test("news kept outside the inbox keeps the owner from blocking, and wakes it once")
    func otherWork() {
        var inbox = OwnerInbox<Int>()
        let mayBlockWithNewsWaiting = inbox.ownerWillWait(otherWorkWaiting: true)
        #expect(!mayBlockWithNewsWaiting)
        let mayBlock = inbox.ownerWillWait()
        #expect(mayBlock)
        let woke = inbox.wakeOwnerIfWaiting()
        #expect(woke)
        let wokeAgain = inbox.wakeOwnerIfWaiting()
        #expect(!wokeAgain)
        let mayBlockAgain = inbox.ownerWillWait()
        #expect(mayBlockAgain)
        inbox.ownerIsRunning()
        let wokeAfterPoll = inbox.post(1)
        #expect(!wokeAfterPoll, "after poll() returned the owner runs: no wake-up")
    }

    @Test("before a short wait the owner asks for no wake-up, but still does not block over waiting work")
    func shortPause() {
        var inbox = OwnerInbox<Int>()
        let mayPause = inbox.ownerWillPause()
        #expect(mayPause)
        let woke = inbox.post(1)
        #expect(!woke, "the owner's wait ends on its own: no wake-up")
        let mayPauseWithWorkWaiting = inbox.ownerWillPause()
        #expect(!mayPauseWithWorkWaiting)
        var empty = OwnerInbox<Int>()
        let mayPauseWithNewsWaiting = empty.ownerWillPause(otherWorkWaiting: true)
        #expect(!mayPauseWithNewsWaiting)
    }

    @Test("take(limit:) hands out work in arrival order and says whether more is left; removeAll empties it")
    func takeInBatches() {
        var inbox = OwnerInbox<Int>()
        for item in 1...5 { _ = inbox.post(item) }
        let first = inbox.take(limit: 2)
        #expect(first.items == [1, 2] && first.more)
        let rest = inbox.take(limit: 10)
        #expect(rest.items == [3, 4, 5] && !rest.more)
        _ = inbox.post(6)
        let left = inbox.removeAll()
        #expect(left == [6] && inbox.isEmpty)
    }
}
