import Logging

/// nghttp2 events: responses, refusals, SETTINGS, GOAWAY, PING ACK.
extension Connection: NGHTTP2SessionDelegate {
    func sessionReceivedSettings(maxConcurrentStreams: Int) {
        if maxConcurrentStreams != peerMaxConcurrentStreams {
            logger.debug("peer SETTINGS", metadata: [LogKeys.maxConcurrentStreams: "\(maxConcurrentStreams)"])
        }
        peerMaxConcurrentStreams = maxConcurrentStreams
        receivedSettings = true
    }

    func sessionReceivedGoAway(lastStreamID: Int32, errorCode: UInt32, debugData: String) {
        draining = true
        // The debug data is the server's reason (APNs: {"reason":"..."}), never a credential.
        logger.notice("received GOAWAY; draining the connection", metadata: [
            LogKeys.goAwayCode: "\(errorCode)",
            LogKeys.goAwayLastStream: "\(lastStreamID)",
            LogKeys.goAwayDebugData: "\(debugData)",
        ])
        delegate.connectionReceivedGoAway(self)
    }

    func sessionReceivedPingAck() {
        pingSentAt = nil
        delegate.connectionReceivedPingAck(self)
    }

    func sessionClosed(stream: HTTP2Stream, errorCode: UInt32) {
        let request = stream.request
        if errorCode == NGHTTP2Session.refusedStream {
            guard !request.isDone else { return }
            delegate.connection(self, refused: request)
            return
        }
        if errorCode == 0 && stream.status > 0 {
            receivedFirstResponse = true
            delegate.connectionCompletedRequest(self)
            request.complete(.success(stream.response))
            return
        }
        request.complete(.failure(HTTP2Error(
            code: .protocolError,
            message: stream.status > 0 ? "stream reset with error code \(errorCode) during the response"
                                       : "stream closed with error code \(errorCode) before a response")))
    }
}
