import Logging

/// nghttp2 events: responses, refusals, SETTINGS, GOAWAY, PING ACK.
extension Connection: NGHTTP2SessionDelegate {
    func sessionReceivedSettings(maxConcurrentStreams: Int) {
        if maxConcurrentStreams != state.peerMaxConcurrentStreams {
            logger.debug("peer SETTINGS", metadata: [LogKeys.maxConcurrentStreams: "\(maxConcurrentStreams)"])
        }
        state.settingsReceived(maxConcurrentStreams: maxConcurrentStreams)
    }

    func sessionReceivedGoAway(lastStreamID: Int32, errorCode: UInt32, debugData: String) {
        let action = state.goAwayReceived()
        guard action == .reportGoAway else { return }
        // The debug data is the server's reason (APNs: {"reason":"..."}), never a credential.
        logger.notice("received GOAWAY; draining the connection", metadata: [
            LogKeys.goAwayCode: "\(errorCode)",
            LogKeys.goAwayLastStream: "\(lastStreamID)",
            LogKeys.goAwayDebugData: "\(debugData)",
        ])
        apply(action, now: .now)
    }

    func sessionReceivedPingAck() {
        state.pingAckReceived()
        delegate.connectionReceivedPingAck(self)
    }

    func sessionClosed(stream: HTTP2Stream, errorCode: UInt32) {
        let request = stream.request
        if let overflow = stream.overflow {
            // Our own reset: the server answered, but not within the limits. Not retried here.
            state.streamClosed(responded: false)
            delegate.connection(self, closedStreamAnsweredAfter: nil)
            request.complete(.failure(HTTP2Error(code: .responseTooLarge,
                                                 message: "the response (HTTP \(stream.status)) \(overflow); the stream was reset")))
            return
        }
        let responded = errorCode == 0 && stream.status > 0
        state.streamClosed(responded: responded)
        delegate.connection(self, closedStreamAnsweredAfter: responded ? .now - stream.openedAt : nil)
        if errorCode == NGHTTP2Session.refusedStream {
            guard !request.isDone else { return }
            delegate.connection(self, refused: request)
            return
        }
        if responded {
            request.complete(.success(stream.response))
            return
        }
        request.complete(.failure(HTTP2Error(
            code: .protocolError,
            message: stream.status > 0 ? "stream reset with error code \(errorCode) during the response"
                                       : "stream closed with error code \(errorCode) before a response")))
    }
}
