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
