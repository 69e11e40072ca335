@testable import HTTP2
import Testing

@Suite struct ProxyHandshakeTests {
    @Test func connectRequestCarriesHostAndBasicCredentials() {
        let request = ProxyHandshake.request(host: "api.push.apple.com", port: 443,
                                             proxy: HTTPProxy(host: "proxy", port: 3128, username: "Aladdin", password: "open sesame"))
        #expect(String(decoding: request, as: UTF8.self) ==
            "CONNECT api.push.apple.com:443 HTTP/1.1\r\nHost: api.push.apple.com:443\r\n"
            + "Proxy-Authorization: Basic QWxhZGRpbjpvcGVuIHNlc2FtZQ==\r\n\r\n")
        let anonymous = ProxyHandshake.request(host: "::1", port: 8443, proxy: HTTPProxy(host: "proxy", port: 3128))
        #expect(String(decoding: anonymous, as: UTF8.self) == "CONNECT [::1]:8443 HTTP/1.1\r\nHost: [::1]:8443\r\n\r\n")
    }

    @Test func replyParsing() {
        #expect(ProxyHandshake.parse(Array("HTTP/1.1 200 Connection established\r\n".utf8)) == .incomplete)
        #expect(ProxyHandshake.parse(Array("HTTP/1.1 200 OK\r\nVia: x\r\n\r\n".utf8)) == .established(headerLength: 27))
        #expect(ProxyHandshake.parse(Array("HTTP/1.0 407 Proxy Authentication Required\r\n\r\n".utf8))
            == .rejected(statusLine: "HTTP/1.0 407 Proxy Authentication Required"))
        #expect(ProxyHandshake.parse(Array("SSH-2.0-OpenSSH\r\n\r\n".utf8)) == .rejected(statusLine: "SSH-2.0-OpenSSH"))
    }
}

@Suite struct RequestHeaderBlockTests {
    @Test func pseudoHeadersFirstNamesLowercasedConnectionHeadersDropped() {
        let headers = [
            HTTP2Header(name: "APNs-Topic", value: "com.example.App"),
            HTTP2Header(name: "Connection", value: "keep-alive"),
            HTTP2Header(name: ":path", value: "/evil"),
            HTTP2Header(name: "authorization", value: "bearer x", neverIndex: true),
            HTTP2Header(name: "Host", value: "other"),
        ]
        let block = RequestHeaderBlock(method: "POST", authority: "api.push.apple.com", headers: headers)
        let fields = block.textFields(path: "/3/device/abc")
        #expect(fields.map(\.name) == [":method", ":scheme", ":authority", ":path", "apns-topic", "authorization"])
        #expect(fields.map(\.value) == ["POST", "https", "api.push.apple.com", "/3/device/abc", "com.example.App", "bearer x"])
        #expect(block.fields.map(\.neverIndex) == [false, false, false, false, true])
    }

    @Test func authorityOmitsTheDefaultPort() {
        var configuration = HTTP2ClientConfiguration(host: "api.push.apple.com", port: 443)
        #expect(configuration.authority == "api.push.apple.com")
        configuration.port = 2197
        #expect(configuration.authority == "api.push.apple.com:2197")
        configuration.serverName = "::1"
        #expect(configuration.authority == "[::1]:2197")
    }

    @Test func responseHeaderLookupIsCaseInsensitive() {
        let response = HTTP2Response(status: 200, headers: [HTTP2Header(name: "apns-id", value: "42")])
        #expect(response.header("APNs-ID") == "42")
        #expect(response.header("missing") == nil)
    }
}

@Suite struct PoolPartsTests {
    @Test func fifoQueueKeepsOrderAcrossPrependAndCompaction() {
        var queue = FIFOQueue<Int>()
        for value in 0..<3000 { queue.append(value) }
        for expected in 0..<2000 { #expect(queue.popFirst() == expected) }
        queue.prepend(1999)
        #expect(queue.count == 1001)
        #expect(queue.popFirst() == 1999)
        #expect(queue.first == 2000)
        while queue.popFirst() != nil {}
        #expect(queue.isEmpty)
        queue.prepend(7)
        #expect(queue.popFirst() == 7)
    }

    @Test func errorsSayWhetherTheRequestWasProcessed() {
        let notProcessed: [HTTP2Error.Code] = [.connectFailed, .tlsFailed, .refused]
        let unknown: [HTTP2Error.Code] = [.connectionLost, .timeout, .protocolError, .shutdown]
        #expect(notProcessed.allSatisfy { HTTP2Error(code: $0, message: "").requestWasNotProcessed })
        #expect(unknown.allSatisfy { !HTTP2Error(code: $0, message: "").requestWasNotProcessed })
    }
}

@Suite struct HTTP2ErrorTests {
    @Test func anErrorKnowsWhereItWasRaisedWithoutSayingItToUsers() {
        let error = HTTP2Error(code: .timeout, message: "no answer")
        #expect(error.location.hasPrefix("HTTP2Tests/UnitTests.swift:"))
        #expect(error.description == "HTTP/2 timeout: no answer")
        #expect(error.debugDescription.contains("(at HTTP2Tests/UnitTests.swift:"))
    }
}

@Suite struct StreamIDTests {
    private final class Silent: NGHTTP2SessionDelegate {
        func sessionReceivedSettings(maxConcurrentStreams: Int) {}
        func sessionReceivedGoAway(lastStreamID: Int32, errorCode: UInt32, debugData: String) {}
        func sessionReceivedPingAck() {}
        func sessionClosed(stream: HTTP2Stream, errorCode: UInt32) {}
    }

    /// A connection's stream ids end at 2^31 − 1: the last one is used, then the session refuses
    /// (the connection drains) instead of wrapping onto an id the server has seen.
    @Test func theLastStreamIDIsUsedThenTheSessionRefuses() throws {
        let delegate = Silent()
        try withExtendedLifetime(delegate) {
            let session = try NGHTTP2Session(delegate: delegate)
            #expect(session.setNextStreamID(Int32.max - 2))
            let request = PendingRequest(Submission(
                headerBlock: RequestHeaderBlock(method: "POST", authority: "a", headers: []), path: "/", body: [],
                deadline: .now + .seconds(5), completion: { _ in }))
            #expect(try session.submit(HTTP2Stream(request: request, openedAt: .now)) == Int32.max - 2)
            #expect(try session.submit(HTTP2Stream(request: request, openedAt: .now)) == Int32.max)
            #expect { try session.submit(HTTP2Stream(request: request, openedAt: .now)) } throws: { ($0 as? HTTP2Error)?.code == .refused }
        }
    }
}
