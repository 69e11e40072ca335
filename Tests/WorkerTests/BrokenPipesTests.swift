#if canImport(Glibc)
import Glibc
#endif
import Testing
import Worker

@Suite struct BrokenPipesTests {
    /// A write to a socket whose peer is gone, from a thread that never blocked SIGPIPE (as
    /// hiredis's Dispatch threads write): it fails with EPIPE, and the process lives on. Without
    /// the process-wide ignore, SIGPIPE ends the whole test run here.
    @Test func aWriteToAClosedSocketFailsInsteadOfKillingTheProcess() async throws {
        BrokenPipes.ignoreProcessWide()
        var pair: [Int32] = [0, 0]
        #expect(socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0, &pair) == 0)
        close(pair[1])
        let writer = pair[0]
        let result = await Task.detached { () -> (Int, Int32) in
            let byte: [UInt8] = [1]
            let written = write(writer, byte, 1)
            return (written, errno)
        }.value
        close(writer)
        #expect(result.0 == -1)
        #expect(result.1 == EPIPE)
    }
}
