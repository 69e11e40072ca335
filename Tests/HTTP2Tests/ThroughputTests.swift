import Foundation
import HTTP2
import NIOConcurrencyHelpers
import Synchronization
import Testing

extension IntegrationSuite {
    /// A sanity check of the hot path (completion API, no per-request Task): many small
    /// requests with a bounded window all complete, and the rate is printed for comparison
    /// with h2load against the same server.
    @Suite struct Throughput {
        @Test func tenThousandSmallRequestsWithAWindowOfFiveHundred() async throws {
            let pki = try TestPKI.get()
            let (server, port) = try await TestServers.startNghttpd(pki)
            defer { server.stop() }
            let total = Int(ProcessInfo.processInfo.environment["HTTP2_BENCH_REQUESTS"] ?? "") ?? 10_000
            let window = 500
            var configuration = pki.configuration(port: port)
            configuration.maxConnections = 2
            try await withClient(configuration) { client in
                let start = ContinuousClock.now
                let failures = Atomic(0)
                await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
                    let state = NIOLockedValueBox((sent: 0, finished: 0))
                    let request = HTTP2Request(method: "GET", path: "/hello.txt",
                                               headers: [HTTP2Header(name: "authorization", value: "bearer x", neverIndex: true)])
                    @Sendable func sendNext() {
                        let shouldSend = state.withLockedValue { state -> Bool in
                            guard state.sent < total else { return false }
                            state.sent += 1
                            return true
                        }
                        guard shouldSend else { return }
                        client.send(request) { result in
                            if (try? result.get().status) != 200 { failures.add(1, ordering: .relaxed) }
                            let finished = state.withLockedValue { state -> Bool in
                                state.finished += 1
                                return state.finished == total
                            }
                            if finished { done.resume() } else { sendNext() }
                        }
                    }
                    for _ in 0..<window { sendNext() }
                }
                let elapsed = ContinuousClock.now - start
                let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
                print("HTTP2 throughput: \(total) requests in \(elapsed): \(Int(Double(total) / seconds)) req/s, "
                      + "connections opened: \(client.statistics.connectionsOpened)")
                #expect(failures.load(ordering: .relaxed) == 0)
                #expect(client.statistics.requestsCompleted == total)
            }
        }
    }
}
