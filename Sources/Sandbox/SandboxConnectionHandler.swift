import Foundation
import Logging
import NIOCore
import NIOHTTP2

/// Which of an `APNsSandbox`'s listeners a connection came in on.
enum SandboxListenerRole: Sendable {
    /// Device pushes, broadcasts and `/_sandbox/` control (api.push.apple.com).
    case push
    /// Broadcast channels only (api-manage-broadcast.push.apple.com).
    case channelManagement
}

/// What every connection of a listener shares and never changes after start.
struct SandboxSettings: Sendable {
    var role = SandboxListenerRole.push
    let validator: SandboxRequestValidator
    let broadcastValidator: SandboxBroadcastValidator
    let channelManagement: SandboxChannelManagement
    let maxConcurrentStreams: Int
    let providerTokenMinimumUpdateInterval: Duration
    let logNotifications: Bool
    let logger: Logger
}

/// One client connection, placed after the HTTP/2 handler: every stream's frames arrive here on the
/// connection channel (no channel per stream, which cost more than the requests themselves). It owns
/// the per-connection state (token cache, request count for faults, open streams, GOAWAY drain, held
/// answers); everything runs on the connection's event loop, so no locks. Answers are written as
/// they are decided and flushed once per read batch or timer tick, so many share a TLS record.
final class SandboxConnectionHandler: ChannelInboundHandler {
    typealias InboundIn = HTTP2Frame
    typealias OutboundOut = HTTP2Frame

    /// Windows are topped up to this once half is used, as nghttp2 and NIO's stream channels do.
    private static let windowTarget = 65_535

    let id: Int
    private let identity: SandboxClientIdentity
    private let settings: SandboxSettings
    private let recorder: SandboxRecorder
    private let abortHandler: SandboxAbortHandler
    private var context: ChannelHandlerContext?

    private var tokens: ProviderTokenCache
    private var uuids = SandboxUUIDGenerator()
    private var requestCount = 0
    /// Token connections start with one stream, like APNs, until a token checks out.
    private var limitRaised: Bool
    /// Requests whose END_STREAM has not arrived yet.
    private var incomplete: [HTTP2StreamID: SandboxStreamRequest] = [:]
    private var openStreams = 0
    private var peakStreams = 0
    private var settingsAcknowledged = false
    private var stalledStreams: Set<HTTP2StreamID> = []
    private var highestStreamID = HTTP2StreamID.rootStream
    /// Set when a GOAWAY has been decided; `goAwayLastStreamID` once it has been sent.
    private var draining = false
    private var goAwayLastStreamID: HTTP2StreamID?
    private var delayed = SandboxDelayedAnswers()
    private var delayTimer: Scheduled<Void>?
    private var delayTimerDue: NIODeadline?
    private var unflushed = false

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
        self.tokens = ProviderTokenCache(minimumUpdateInterval: settings.providerTokenMinimumUpdateInterval)
        self.limitRaised = identity != .none || settings.maxConcurrentStreams <= 1
    }

    /// The SETTINGS_MAX_CONCURRENT_STREAMS this connection starts with.
    var initialStreamLimit: Int { self.limitRaised ? self.settings.maxConcurrentStreams : 1 }

    func handlerAdded(context: ChannelHandlerContext) {
        self.context = context
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        self.delayTimer?.cancel()
        self.delayTimer = nil
        self.context = nil
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let frame = self.unwrapInboundIn(data)
        let streamID = frame.streamID
        if streamID == .rootStream {
            if case .settings(.ack) = frame.payload { self.settingsAcknowledged = true }
            return
        }
        // The usual request is HEADERS then DATA with END_STREAM in the same read: only a request
        // still waiting for frames is kept in the table.
        var request = self.incomplete.removeValue(forKey: streamID) ?? SandboxStreamRequest()
        if request.receive(frame.payload) {
            self.handle(request, streamID: streamID, context: context)
        } else if request.headers != nil {
            self.incomplete[streamID] = request
        }
    }

    func channelReadComplete(context: ChannelHandlerContext) {
        self.flushIfNeeded(context: context)
        context.fireChannelReadComplete()
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        switch event {
        case let created as NIOHTTP2StreamCreatedEvent:
            self.streamCreated(created.streamID)
        case let closed as StreamClosedEvent:
            self.streamClosed(closed.streamID)
        case let window as NIOHTTP2WindowUpdatedEvent:
            self.replenish(window, context: context)
        default:
            context.fireUserInboundEventTriggered(event)
        }
    }

    private func streamCreated(_ streamID: HTTP2StreamID) {
        self.openStreams += 1
        self.highestStreamID = max(self.highestStreamID, streamID)
        // Before the client acknowledged our SETTINGS it may legitimately open any number.
        if self.settingsAcknowledged, self.openStreams > self.peakStreams {
            self.peakStreams = self.openStreams
            self.recorder.noteConcurrentStreams(self.peakStreams)
        }
    }

    private func streamClosed(_ streamID: HTTP2StreamID) {
        self.openStreams -= 1
        self.incomplete.removeValue(forKey: streamID)
        self.stalledStreams.remove(streamID)
        self.closeIfDrained()
    }

    /// With no stream channels, nothing else gives DATA credit back: the connection window, and the
    /// window of a stream still sending (only an oversized body gets that far), are topped up here.
    private func replenish(_ window: NIOHTTP2WindowUpdatedEvent, context: ChannelHandlerContext) {
        guard let size = window.inboundWindowSize, size <= Self.windowTarget / 2 else { return }
        if window.streamID != .rootStream, self.incomplete[window.streamID] == nil { return }
        let frame = HTTP2Frame(streamID: window.streamID, payload: .windowUpdate(windowSizeIncrement: Self.windowTarget - size))
        context.write(self.wrapOutboundOut(frame), promise: nil)
        self.unflushed = true
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        if error is NIOHTTP2Errors.MaxStreamsViolation {
            self.recorder.noteStreamLimitViolation()
        }
        // A guard of the HTTP/2 stack tripping (e.g. too many RST_STREAMs: a GOAWAY with last stream 0,
        // so the client retries every open stream) explains duplicates in a test; a peer going away does not.
        let level: Logger.Level = error is any NIOHTTP2Error ? .warning : .debug
        self.settings.logger.log(level: level, "sandbox: connection error", metadata: ["connection": "\(self.id)", "error": "\(error)"])
    }

    /// A complete request.
    private func handle(_ request: SandboxStreamRequest, streamID: HTTP2StreamID, context: ChannelHandlerContext) {
        guard let headers = request.headers else { return }
        self.unflushed = true
        if let last = self.goAwayLastStreamID, streamID > last {
            SandboxResponse.writeRefusal(streamID: streamID, context: context)
            return
        }
        if self.settings.role == .channelManagement {
            self.manageChannels(request, headers: headers, streamID: streamID, context: context)
            return
        }
        let path = headers.headers.first(name: ":path") ?? ""
        if path.hasPrefix(SandboxControl.prefix) {
            let method = headers.headers.first(name: ":method") ?? "GET"
            let answer = SandboxControl.answer(method: method, path: path, body: request.body, recorder: self.recorder)
            SandboxResponse.writeControl(status: answer.status, json: answer.json, streamID: streamID, context: context)
            return
        }
        self.requestCount += 1
        let now = ContinuousClock.now
        var draft = SandboxDraft()
        draft.connectionID = self.id
        draft.receivedAt = now
        let outcome: SandboxRequestValidator.Outcome
        if path.hasPrefix(SandboxBroadcastValidator.pathPrefix) {
            outcome = self.settings.broadcastValidator.validate(
                headers: headers, body: request.body, bodyLength: request.bodyLength, identity: self.identity,
                tokens: &self.tokens, now: now, epochSeconds: SandboxWallClock.epochSeconds(), uuids: &self.uuids, draft: &draft
            )
        } else {
            outcome = self.settings.validator.validate(
                headers: headers, body: request.body, bodyLength: request.bodyLength, identity: self.identity,
                tokens: &self.tokens, now: now, epochSeconds: SandboxWallClock.epochSeconds(), uuids: &self.uuids, draft: &draft
            )
        }
        if outcome.tokenAuthenticated { self.raiseStreamLimit() }

        switch self.recorder.admit(draft, requestNumber: self.requestCount, draining: self.draining) {
        case .reset:
            self.abortHandler.abort()
        case .stall:
            self.stalledStreams.insert(streamID)
            self.closeIfDrained()
        case .answer(let status, let reason, let latency, let goAway):
            if goAway { self.draining = true }
            if self.settings.logNotifications, status == 200 { Self.log(draft) }
            let answer = SandboxDelayedAnswers.Answer(
                streamID: streamID, status: status, reason: reason, apnsID: draft.apnsID,
                isBroadcast: draft.channelID != nil, uniqueID: self.uuids.next(), goAway: goAway
            )
            if latency > .zero {
                self.delayed.insert(answer, due: SandboxDelayedAnswers.due(after: .nanoseconds(latency.nanoseconds)))
                self.scheduleDelayTimer(context: context)
            } else {
                self.write(answer, context: context)
            }
        }
    }

    /// A channel-management request: answered at once, not recorded, no rules or faults.
    private func manageChannels(
        _ request: SandboxStreamRequest, headers: HTTP2Frame.FramePayload.Headers, streamID: HTTP2StreamID, context: ChannelHandlerContext
    ) {
        let answer = self.settings.channelManagement.answer(
            headers: headers, body: request.body, bodyLength: request.bodyLength, identity: self.identity,
            tokens: &self.tokens, now: .now, epochSeconds: SandboxWallClock.epochSeconds(), uuids: &self.uuids
        )
        if answer.tokenAuthenticated { self.raiseStreamLimit() }
        SandboxResponse.writeManagement(answer, streamID: streamID, context: context)
    }

    private func raiseStreamLimit() {
        guard !self.limitRaised else { return }
        self.limitRaised = true
        self.advertise(maxConcurrentStreams: self.settings.maxConcurrentStreams)
    }

    private func write(_ answer: SandboxDelayedAnswers.Answer, context: ChannelHandlerContext) {
        SandboxResponse.write(
            status: answer.status, reason: answer.reason,
            idHeader: answer.isBroadcast ? SandboxResponse.broadcastIDHeader : SandboxResponse.pushIDHeader,
            id: answer.apnsID, uniqueID: answer.uniqueID, streamID: answer.streamID, context: context
        )
        self.unflushed = true
        if answer.goAway { self.sendGoAway() }
    }

    /// One timer per connection, set for the earliest held answer.
    private func scheduleDelayTimer(context: ChannelHandlerContext) {
        guard let due = self.delayed.nextDue else { return }
        if let timerDue = self.delayTimerDue, timerDue <= due { return }
        self.delayTimer?.cancel()
        self.delayTimerDue = due
        self.delayTimer = context.eventLoop.assumeIsolated().scheduleTask(deadline: due) { [self] in
            self.delayTimer = nil
            self.delayTimerDue = nil
            guard let context = self.context else { return }
            let now = NIODeadline.now()
            while let answer = self.delayed.popDue(by: now) {
                self.write(answer, context: context)
            }
            self.flushIfNeeded(context: context)
            self.scheduleDelayTimer(context: context)
        }
    }

    private func flushIfNeeded(context: ChannelHandlerContext) {
        guard self.unflushed else { return }
        self.unflushed = false
        context.flush()
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
        let token = if let channelID = draft.channelID {
            "channel:\(channelID)"
        } else {
            draft.token.count > 12 ? "\(draft.token.prefix(8))…\(draft.token.suffix(4))" : draft.token
        }
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
