import HTTP2
import PushTransport
import Testing
import HTTP2Transport

/// A response past the HTTP/2 client's limits (an endless body, a header flood) is that device's
/// failure: the same server would do it again, so it is neither retried nor waited out.
@Suite struct ResponseTooLargeResultTests {
    @Test func aResponseTooLargeIsTheDevicesFailure() {
        let error = HTTP2Error(code: .responseTooLarge, message: "the response (HTTP 201) body passed 4096 bytes; the stream was reset")
        let result = PushResult(transportError: error)
        #expect(result.reason == "ResponseTooLarge")
        #expect(result.outcome == .permanentFailure(reason: "ResponseTooLarge: \(error.message)"))
    }
}
