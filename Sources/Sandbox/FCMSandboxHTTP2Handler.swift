import NIOCore
import NIOHTTP2

/// One HTTP/2 connection of the FCM mode, after the HTTP/2 handler: every stream's frames arrive
/// here (no channel per stream), as in the APNs mode's `SandboxConnectionHandler`, whose per-request
/// faults (reset, stall, GOAWAY, latency) it applies through the same recorder.
final class FCMSandboxHTTP2Handler: ChannelInboundHandler {
    typealias InboundIn = HTTP2Frame
    typealias OutboundOut = HTTP2Frame

    private static let windowTarget = 65_535

    private let id: Int
    private let responder: FCMSandboxResponder
    private let abortHandler: SandboxAbortHandler
    private var context: ChannelHandlerContext?
    private var incomplete: [HTTP2StreamID: SandboxStreamRequest] = [:]
    private var uuids = SandboxUUIDGenerator()
    private var requestCount = 0
    private var openStreams = 0
    private var peakStreams = 0
    private var settingsAcknowledged = false
    private var stalledStreams: Set<HTTP2StreamID> = []
    private var highestStreamID = HTTP2StreamID.rootStream
    private var draining = false
    private var goAwayLastStreamID: HTTP2StreamID?
    private var unflushed = false

    init(id: Int, responder: FCMSandboxResponder, abortHandler: SandboxAbortHandler) {
        self.id = id
        self.responder = responder
        self.abortHandler = abortHandler
    }

    func handlerAdded(context: ChannelHandlerContext) { self.context = context }
    func handlerRemoved(context: ChannelHandlerContext) { self.context = nil }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let frame = self.unwrapInboundIn(data)
        guard frame.streamID != .rootStream else {
            if case .settings(.ack) = frame.payload { self.settingsAcknowledged = true }
            return
        }
        var request = self.incomplete.removeValue(forKey: frame.streamID) ?? SandboxStreamRequest()
        if request.receive(frame.payload) {
            self.handle(request, streamID: frame.streamID, context: context)
        } else if request.headers != nil {
            self.incomplete[frame.streamID] = request
        }
    }

    func channelReadComplete(context: ChannelHandlerContext) {
        self.flushIfNeeded(context: context)
        context.fireChannelReadComplete()
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        switch event {
        case let created as NIOHTTP2StreamCreatedEvent:
            self.openStreams += 1
            self.highestStreamID = max(self.highestStreamID, created.streamID)
            // Before the client acknowledged our SETTINGS it may open any number.
            if self.settingsAcknowledged, self.openStreams > self.peakStreams {
                self.peakStreams = self.openStreams
                self.responder.recorder.noteConcurrentStreams(self.peakStreams)
            }
        case let closed as StreamClosedEvent:
            self.openStreams -= 1
            self.incomplete.removeValue(forKey: closed.streamID)
            self.stalledStreams.remove(closed.streamID)
            self.closeIfDrained()
        case let window as NIOHTTP2WindowUpdatedEvent:
            // Without stream channels nothing else gives DATA credit back.
            guard let size = window.inboundWindowSize, size <= Self.windowTarget / 2 else { return }
            if window.streamID != .rootStream, self.incomplete[window.streamID] == nil { return }
            let frame = HTTP2Frame(streamID: window.streamID, payload: .windowUpdate(windowSizeIncrement: Self.windowTarget - size))
            context.write(self.wrapOutboundOut(frame), promise: nil)
            self.unflushed = true
        default:
            context.fireUserInboundEventTriggered(event)
        }
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        if error is NIOHTTP2Errors.MaxStreamsViolation { self.responder.recorder.noteStreamLimitViolation() }
    }

    private func handle(_ request: SandboxStreamRequest, streamID: HTTP2StreamID, context: ChannelHandlerContext) {
        guard let headers = request.headers?.headers else { return }
        self.unflushed = true
        if let last = self.goAwayLastStreamID, streamID > last {
            context.write(self.wrapOutboundOut(HTTP2Frame(streamID: streamID, payload: .rstStream(.refusedStream))), promise: nil)
            return
        }
        let body = request.body.map { Array($0.readableBytesView) } ?? []
        let reply = self.responder.reply(
            method: headers.first(name: ":method") ?? "GET", path: headers.first(name: ":path") ?? "/",
            authorization: headers.first(name: "authorization"), body: body, connectionID: self.id, uuids: &self.uuids
        )
        switch reply {
        case let .answer(answer):
            self.write(answer, streamID: streamID, context: context)
        case let .message(draft, problem):
            self.requestCount += 1
            switch self.responder.recorder.admit(draft, requestNumber: self.requestCount, draining: self.draining) {
            case .reset:
                self.abortHandler.abort()
            case .stall:
                self.stalledStreams.insert(streamID)
                self.closeIfDrained()
            case let .answer(status, reason, latency, goAway):
                if goAway { self.draining = true }
                let answer = self.responder.messageAnswer(status: status, reason: reason, draft: draft, problem: problem)
                guard latency > .zero else {
                    self.write(answer, streamID: streamID, context: context)
                    if goAway { self.sendGoAway() }
                    return
                }
                context.eventLoop.assumeIsolated().scheduleTask(in: .nanoseconds(latency.nanoseconds)) { [self] in
                    guard let context = self.context else { return }
                    self.write(answer, streamID: streamID, context: context)
                    if goAway { self.sendGoAway() }
                    self.flushIfNeeded(context: context)
                }
            }
        }
    }

    private func write(_ answer: FCMSandboxHTTPAnswer, streamID: HTTP2StreamID, context: ChannelHandlerContext) {
        var headers = HTTP2Frame.FramePayload.Headers(headers: [":status": String(answer.status)], endStream: false)
        for (name, value) in answer.headers { headers.headers.add(name: name, value: value) }
        context.write(self.wrapOutboundOut(HTTP2Frame(streamID: streamID, payload: .headers(headers))), promise: nil)
        let data = HTTP2Frame.FramePayload.Data(data: .byteBuffer(context.channel.allocator.buffer(string: answer.body)), endStream: true)
        context.write(self.wrapOutboundOut(HTTP2Frame(streamID: streamID, payload: .data(data))), promise: nil)
        self.unflushed = true
    }

    private func flushIfNeeded(context: ChannelHandlerContext) {
        guard self.unflushed else { return }
        self.unflushed = false
        context.flush()
    }

    /// Every stream opened so far is still answered, later ones are refused.
    private func sendGoAway() {
        guard let context, self.goAwayLastStreamID == nil else { return }
        self.goAwayLastStreamID = self.highestStreamID
        let frame = HTTP2Frame(streamID: .rootStream, payload: .goAway(lastStreamID: self.highestStreamID, errorCode: .noError, opaqueData: nil))
        context.writeAndFlush(self.wrapOutboundOut(frame), promise: nil)
        self.closeIfDrained()
    }

    private func closeIfDrained() {
        guard let context, self.goAwayLastStreamID != nil, self.openStreams - self.stalledStreams.count <= 0 else { return }
        // The last answers may still sit in the HTTP/2 handler's buffer: flush, close on a later tick.
        context.channel.flush()
        let channel = context.channel
        context.eventLoop.assumeIsolated().execute {
            channel.flush()
            channel.close(promise: nil)
        }
    }
}
