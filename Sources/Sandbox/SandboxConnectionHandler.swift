import Foundation
import Logging
import NIOCore
import NIOHTTP2

/// What every connection shares and never changes after start.
struct SandboxSettings: Sendable {
    let validator: SandboxRequestValidator
    let maxConcurrentStreams: Int
    let logNotifications: Bool
    let logger: Logger
}

/// One client connection, placed after the HTTP/2 handler in the connection's pipeline. It owns the
/// per-connection state (token cache, request count for faults, open streams, GOAWAY drain) that its
/// stream handlers use; everything runs on the connection's event loop, so no locks.
final class SandboxConnectionHandler: ChannelInboundHandler {
    typealias InboundIn = HTTP2Frame
    typealias OutboundOut = HTTP2Frame

    let id: Int
    private let identity: SandboxClientIdentity
    private let settings: SandboxSettings
    private let recorder: SandboxRecorder
    private let abortHandler: SandboxAbortHandler
    private var context: ChannelHandlerContext?

    private var tokens = ProviderTokenCache()
    private var uuids = SandboxUUIDGenerator()
    private var requestCount = 0
    /// Token connections start with one stream, like APNs, until a token checks out.
    private var limitRaised: Bool
    private var openStreams = 0
    private var peakStreams = 0
    private var settingsAcknowledged = false
    private var stalledStreams: Set<HTTP2StreamID> = []
    private var highestStreamID = HTTP2StreamID.rootStream
    /// Set when a GOAWAY has been decided; `goAwayLastStreamID` once it has been sent.
    private var draining = false
    private var goAwayLastStreamID: HTTP2StreamID?

    init(
        id: Int,
        identity: SandboxClientIdentity,
        settings: SandboxSettings,
        recorder: SandboxRecorder,
        abortHandler: SandboxAbortHandler
    ) {
        self.id = id
        self.identity = identity
        self.settings = settings
        self.recorder = recorder
        self.abortHandler = abortHandler
        self.limitRaised = identity != .none || settings.maxConcurrentStreams <= 1
    }

    /// The SETTINGS_MAX_CONCURRENT_STREAMS this connection starts with.
    var initialStreamLimit: Int { self.limitRaised ? self.settings.maxConcurrentStreams : 1 }

    func handlerAdded(context: ChannelHandlerContext) {
        self.context = context
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        self.context = nil
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        if case .settings(.ack) = self.unwrapInboundIn(data).payload {
            self.settingsAcknowledged = true
        }
        context.fireChannelRead(data)
    }

    /// From `SandboxStreamDelegate`: the inline multiplexer reports streams there, not as pipeline events.
    func streamCreated(_ streamID: HTTP2StreamID) {
        self.openStreams += 1
        self.highestStreamID = max(self.highestStreamID, streamID)
        // Before the client acknowledged our SETTINGS it may legitimately open any number.
        if self.settingsAcknowledged, self.openStreams > self.peakStreams {
            self.peakStreams = self.openStreams
            self.recorder.noteConcurrentStreams(self.peakStreams)
        }
    }

    func streamClosed(_ streamID: HTTP2StreamID) {
        self.openStreams -= 1
        self.stalledStreams.remove(streamID)
        self.closeIfDrained()
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        if error is NIOHTTP2Errors.MaxStreamsViolation {
            self.recorder.noteStreamLimitViolation()
        }
        self.settings.logger.debug("sandbox: connection error", metadata: ["connection": "\(self.id)", "error": "\(error)"])
    }

    /// A complete request from one of this connection's streams.
    func handle(
        headers: HTTP2Frame.FramePayload.Headers,
        body: ByteBuffer?,
        bodyLength: Int,
        streamID: HTTP2StreamID,
        stream: SandboxStreamHandler,
        context: ChannelHandlerContext
    ) {
        if let last = self.goAwayLastStreamID, streamID > last {
            stream.refuse(context: context)
            return
        }
        if let path = headers.headers.first(name: ":path"), path.hasPrefix(SandboxControl.prefix) {
            let method = headers.headers.first(name: ":method") ?? "GET"
            let answer = SandboxControl.answer(method: method, path: path, body: body, recorder: self.recorder)
            stream.respondControl(context: context, status: answer.status, json: answer.json)
            return
        }
        self.requestCount += 1
        let now = ContinuousClock.now
        var draft = SandboxDraft()
        draft.connectionID = self.id
        draft.receivedAt = now
        let outcome = self.settings.validator.validate(
            headers: headers, body: body, bodyLength: bodyLength, identity: self.identity, tokens: &self.tokens,
            now: now, epochSeconds: SandboxWallClock.epochSeconds(), uuids: &self.uuids, draft: &draft
        )
        if outcome.tokenAuthenticated, !self.limitRaised {
            self.limitRaised = true
            self.advertise(maxConcurrentStreams: self.settings.maxConcurrentStreams)
        }

        switch self.recorder.admit(draft, requestNumber: self.requestCount, draining: self.draining) {
        case .reset:
            self.abortHandler.abort()
        case .stall:
            self.stalledStreams.insert(streamID)
            self.closeIfDrained()
        case .answer(let status, let reason, let latency, let goAway):
            if goAway { self.draining = true }
            if self.settings.logNotifications, status == 200 { Self.log(draft) }
            let uniqueID = self.uuids.next()
            let apnsID = draft.apnsID
            let answer = {
                stream.respond(context: context, status: status, reason: reason, apnsID: apnsID, uniqueID: uniqueID)
                if goAway { self.sendGoAway() }
            }
            if latency > .zero {
                context.eventLoop.assumeIsolated().scheduleTask(in: .nanoseconds(latency.nanoseconds)) { answer() }
            } else {
                answer()
            }
        }
    }

    private func advertise(maxConcurrentStreams: Int) {
        guard let context else { return }
        let settings: HTTP2Settings = [HTTP2Setting(parameter: .maxConcurrentStreams, value: maxConcurrentStreams)]
        context.writeAndFlush(self.wrapOutboundOut(HTTP2Frame(streamID: .rootStream, payload: .settings(.settings(settings)))), promise: nil)
    }

    /// Like an APNs server going away: every stream opened so far is still answered, later ones are not.
    private func sendGoAway() {
        guard let context, self.goAwayLastStreamID == nil else { return }
        self.goAwayLastStreamID = self.highestStreamID
        let reason = context.channel.allocator.buffer(string: #"{"reason":"Shutdown"}"#)
        let frame = HTTP2Frame(
            streamID: .rootStream,
            payload: .goAway(lastStreamID: self.highestStreamID, errorCode: .noError, opaqueData: reason)
        )
        context.writeAndFlush(self.wrapOutboundOut(frame), promise: nil)
        self.closeIfDrained()
    }

    /// Stalled streams would never drain, so they don't hold the connection open.
    private func closeIfDrained() {
        guard let context, self.goAwayLastStreamID != nil, self.openStreams - self.stalledStreams.count <= 0 else { return }
        self.settings.logger.debug("sandbox: drained after GOAWAY, closing", metadata: ["connection": "\(self.id)", "requests": "\(self.requestCount)"])
        // The last answers may still sit in the HTTP/2 handler's write buffer: flush them first and
        // close on a later tick, or the client sees the connection die with its answers unsent.
        context.channel.flush()
        let channel = context.channel
        context.eventLoop.assumeIsolated().execute {
            channel.flush()
            channel.close(promise: nil)
        }
    }

    private static func log(_ draft: SandboxDraft) {
        let token = draft.token.count > 12 ? "\(draft.token.prefix(8))…\(draft.token.suffix(4))" : draft.token
        // Unbuffered, so a demo or a CI log shows each notification as it arrives.
        let line = "sandbox: 200 \(token) topic=\(draft.topic) push-type=\(draft.pushType) priority=\(draft.priority) bytes=\(draft.payload.count) auth=\(draft.authentication)\n"
        FileHandle.standardOutput.write(Data(line.utf8))
    }
}

extension Duration {
    var nanoseconds: Int64 {
        let (seconds, attoseconds) = self.components
        return seconds * 1_000_000_000 + attoseconds / 1_000_000_000
    }
}

/// Forwards the HTTP/2 handler's stream bookkeeping to the connection (same event loop).
struct SandboxStreamDelegate: NIOHTTP2StreamDelegate {
    let connection: NIOLoopBound<SandboxConnectionHandler>

    func streamCreated(_ id: HTTP2StreamID, channel: any Channel) {
        self.connection.value.streamCreated(id)
    }

    func streamClosed(_ id: HTTP2StreamID, channel: any Channel) {
        self.connection.value.streamClosed(id)
    }
}
