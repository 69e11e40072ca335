import PushCore
@testable import Sandbox
import Testing

/// The FCM token endpoint's `Date` header, which a client whose assertion was refused reads the
/// endpoint's clock from.
@Suite struct SandboxHTTPDateTests {
    @Test(arguments: [
        (784_111_777, "Sun, 06 Nov 1994 08:49:37 GMT"),   // RFC 9110's own example
        (0, "Thu, 01 Jan 1970 00:00:00 GMT"),
        (951_782_400, "Tue, 29 Feb 2000 00:00:00 GMT"),
        (1_798_761_599, "Thu, 31 Dec 2026 23:59:59 GMT"),
    ])
    func imfFixdate(_ seconds: Int, _ text: String) {
        #expect(SandboxWallClock.httpDate(epochSeconds: seconds) == text)
        #expect(HTTPDate.unixSeconds(text) == seconds, "read back as a client reads it")
    }
}
