internal import CNghttp2

/// What nghttp2 reports while `receive` or `drainOutput` run. Implementations must not call
/// `receive`/`drainOutput` re-entrantly.
protocol NGHTTP2SessionDelegate: AnyObject {
    func sessionReceivedSettings(maxConcurrentStreams: Int)
    func sessionReceivedGoAway(lastStreamID: Int32, errorCode: UInt32, debugData: String)
    func sessionReceivedPingAck()
    /// The stream ended: `errorCode` 0 is a normal close; REFUSED_STREAM (7) means the
    /// server did not process it (also reported for HEADERS nghttp2 refused to send).
    func sessionClosed(stream: HTTP2Stream, errorCode: UInt32)
}

/// An nghttp2 client session on the memory API: bytes go in with `receive` and come out of
/// `drainOutput`; the owner moves them through TLS. Confined to the I/O thread.
final class NGHTTP2Session {
    static let refusedStream = NGHTTP2_REFUSED_STREAM.rawValue

    private var raw: OpaquePointer?
    /// The owning connection, which outlives its session (checked retains cost on every callback).
    private unowned(unsafe) let delegate: any NGHTTP2SessionDelegate
    /// Open streams by id. Holds the strong reference; nghttp2's stream_user_data is unretained.
    private(set) var streams: [Int32: HTTP2Stream] = [:]
    /// Lowercase names of the response headers to keep; nil keeps all.
    private let keptResponseHeaders: [[UInt8]]?
    fileprivate let limits: HTTP2ResponseLimits

    init(delegate: any NGHTTP2SessionDelegate, keptResponseHeaders: [String]? = nil,
         limits: HTTP2ResponseLimits = HTTP2ResponseLimits()) throws(HTTP2Error) {
        self.delegate = delegate
        self.limits = limits
        self.keptResponseHeaders = keptResponseHeaders?.map { Array($0.lowercased().utf8) }
        var callbacks: OpaquePointer?
        guard nghttp2_session_callbacks_new(&callbacks) == 0, let callbacks else {
            throw HTTP2Error(code: .protocolError, message: "nghttp2_session_callbacks_new failed")
        }
        defer { nghttp2_session_callbacks_del(callbacks) }
        nghttp2_session_callbacks_set_on_frame_recv_callback(callbacks, onFrameRecv)
        nghttp2_session_callbacks_set_on_header_callback(callbacks, onHeader)
        nghttp2_session_callbacks_set_on_data_chunk_recv_callback(callbacks, onDataChunk)
        nghttp2_session_callbacks_set_on_stream_close_callback(callbacks, onStreamClose)
        nghttp2_session_callbacks_set_on_frame_send_callback(callbacks, onFrameSend)
        nghttp2_session_callbacks_set_on_frame_not_send_callback(callbacks, onFrameNotSend)
        var session: OpaquePointer?
        // The session keeps this pointer; the owner (the connection) outlives the session it owns.
        let user = Unmanaged.passUnretained(self).toOpaque()
        guard nghttp2_session_client_new(&session, callbacks, user) == 0, let session else {
            throw HTTP2Error(code: .protocolError, message: "nghttp2_session_client_new failed")
        }
        raw = session
    }

    deinit {
        if let raw { nghttp2_session_del(raw) }
    }

    /// Client SETTINGS: no push; large windows so responses never wait for WINDOW_UPDATEs.
    func submitSettings(initialWindowSize: Int32, connectionWindowSize: Int32) throws(HTTP2Error) {
        let entries = [
            nghttp2_settings_entry(settings_id: Int32(NGHTTP2_SETTINGS_ENABLE_PUSH.rawValue), value: 0),
            nghttp2_settings_entry(settings_id: Int32(NGHTTP2_SETTINGS_INITIAL_WINDOW_SIZE.rawValue), value: UInt32(initialWindowSize)),
        ]
        try check(nghttp2_submit_settings(raw, UInt8(NGHTTP2_FLAG_NONE.rawValue), entries, entries.count), "submit SETTINGS")
        try check(nghttp2_session_set_local_window_size(raw, UInt8(NGHTTP2_FLAG_NONE.rawValue), 0, connectionWindowSize),
                  "set connection window")
    }

    /// Where this session's next stream id starts (odd, not below the current one): tests start
    /// near the end of the 31-bit id space. False if nghttp2 refused the id.
    func setNextStreamID(_ id: Int32) -> Bool {
        nghttp2_session_set_next_stream_id(raw, id) == 0
    }

    /// Queues HEADERS (and DATA from `request.body`); returns the stream id. Stream ids are 31-bit
    /// and never reused: after 2^30 requests on one connection nghttp2 has none left and this
    /// throws `.refused`, on which the connection drains and the request goes to another one.
    func submit(_ stream: HTTP2Stream) throws(HTTP2Error) -> Int32 {
        let request = stream.request
        var path = request.path
        // One field of this request alone (an apns-id) goes last; names and values empty otherwise.
        var ownName = request.requestHeader?.name ?? ""
        var ownValue = request.requestHeader?.value ?? ""
        let hasOwnField = !ownName.isEmpty
        let user = Unmanaged.passUnretained(stream).toOpaque()
        let hasBody = !request.body.isEmpty
        let id: Int32 = path.withUTF8 { pathBytes in ownName.withUTF8 { ownNameBytes in ownValue.withUTF8 { ownValueBytes in
            request.headerBlock.bytes.withUnsafeBufferPointer { bytes in
                request.headerBlock.fields.withUnsafeBufferPointer { fields in
                    let count = fields.count + 1 + (hasOwnField ? 1 : 0)
                    return withUnsafeTemporaryAllocation(of: nghttp2_nv.self, capacity: count) { nva in
                        // nghttp2 copies names and values during submit (no NO_COPY flags), so the
                        // block, the path and the own field only have to outlive this call.
                        let base = UnsafeMutablePointer(mutating: bytes.baseAddress!)
                        var slot = 0
                        for field in fields {
                            if slot == RequestHeaderBlock.pathPosition {
                                nva[slot] = Self.pathField(pathBytes)
                                slot += 1
                            }
                            let flags = field.neverIndex ? NGHTTP2_NV_FLAG_NO_INDEX.rawValue : NGHTTP2_NV_FLAG_NONE.rawValue
                            nva[slot] = nghttp2_nv(name: base + Int(field.nameStart), value: base + Int(field.valueStart),
                                                   namelen: Int(field.nameLength), valuelen: Int(field.valueLength),
                                                   flags: UInt8(flags))
                            slot += 1
                        }
                        if slot == fields.count { nva[slot] = Self.pathField(pathBytes) }
                        if hasOwnField {
                            nva[count - 1] = nghttp2_nv(
                                name: UnsafeMutablePointer(mutating: ownNameBytes.baseAddress!),
                                value: UnsafeMutablePointer(mutating: ownValueBytes.baseAddress ?? ownNameBytes.baseAddress!),
                                namelen: ownNameBytes.count, valuelen: ownValueBytes.count,
                                flags: UInt8(NGHTTP2_NV_FLAG_NO_INDEX.rawValue))
                        }
                        guard hasBody else {
                            return nghttp2_submit_request(raw, nil, nva.baseAddress, count, nil, user)
                        }
                        var provider = nghttp2_data_provider(source: nghttp2_data_source(ptr: user), read_callback: readBody)
                        return nghttp2_submit_request(raw, nil, nva.baseAddress, count, &provider, user)
                    }
                }
            }
        } } }
        guard id > 0 else {
            throw HTTP2Error(code: .refused, message: "nghttp2_submit_request: \(String(cString: nghttp2_strerror(id)))")
        }
        stream.id = id
        streams[id] = stream
        return id
    }

    /// Feeds received bytes; callbacks run during this call.
    func receive(_ buffer: [UInt8], count: Int) throws(HTTP2Error) {
        let rc = buffer.withUnsafeBufferPointer { nghttp2_session_mem_recv(raw, $0.baseAddress, count) }
        if rc < 0 {
            throw HTTP2Error(code: .protocolError, message: "nghttp2: \(String(cString: nghttp2_strerror(Int32(rc))))")
        }
    }

    /// Appends every frame nghttp2 has ready to `output`, so many frames leave in one TLS write.
    func drainOutput(into output: inout [UInt8]) throws(HTTP2Error) {
        while true {
            var chunk: UnsafePointer<UInt8>?
            let n = nghttp2_session_mem_send(raw, &chunk)
            if n < 0 {
                throw HTTP2Error(code: .protocolError, message: "nghttp2: \(String(cString: nghttp2_strerror(Int32(n))))")
            }
            guard n > 0, let chunk else { return }
            // The chunk is valid only until the next mem_send: copy it now.
            output.append(contentsOf: UnsafeBufferPointer(start: chunk, count: n))
        }
    }

    var wantsRead: Bool { nghttp2_session_want_read(raw) != 0 }
    var wantsWrite: Bool { nghttp2_session_want_write(raw) != 0 }

    /// The peer's live SETTINGS_MAX_CONCURRENT_STREAMS (0xFFFFFFFF when it set none).
    var peerMaxConcurrentStreams: Int {
        Int(nghttp2_session_get_remote_settings(raw, NGHTTP2_SETTINGS_MAX_CONCURRENT_STREAMS))
    }

    /// RST_STREAM(CANCEL): used when a request timed out; its close is reported as usual.
    func cancel(streamID: Int32) {
        _ = nghttp2_submit_rst_stream(raw, UInt8(NGHTTP2_FLAG_NONE.rawValue), streamID, NGHTTP2_CANCEL.rawValue)
    }

    func submitPing() {
        _ = nghttp2_submit_ping(raw, UInt8(NGHTTP2_FLAG_NONE.rawValue), nil)
    }

    /// GOAWAY(NO_ERROR); afterwards the session wants no more reads.
    func terminate() {
        _ = nghttp2_session_terminate_session(raw, NGHTTP2_NO_ERROR.rawValue)
    }

    /// Detaches every open stream, for failing or requeueing when the connection dies.
    func removeAllStreams() -> [HTTP2Stream] {
        let open = Array(streams.values).sorted { $0.id < $1.id }
        streams.removeAll()
        return open
    }

    private static let pathName: StaticString = ":path"

    /// Per-request paths are never indexed: each is unique, and would only churn the HPACK table.
    private static func pathField(_ path: UnsafeBufferPointer<UInt8>) -> nghttp2_nv {
        nghttp2_nv(name: UnsafeMutablePointer(mutating: pathName.utf8Start), value: UnsafeMutablePointer(mutating: path.baseAddress ?? pathName.utf8Start),
                   namelen: pathName.utf8CodeUnitCount, valuelen: path.count, flags: UInt8(NGHTTP2_NV_FLAG_NO_INDEX.rawValue))
    }

    private func check(_ rc: Int32, _ step: String) throws(HTTP2Error) {
        guard rc == 0 else {
            throw HTTP2Error(code: .protocolError, message: "nghttp2 \(step): \(String(cString: nghttp2_strerror(rc)))")
        }
    }

    // MARK: Callback entry points (called by the C trampolines below)

    fileprivate func frameReceived(_ frame: UnsafePointer<nghttp2_frame>) {
        let header = frame.pointee.hd
        switch UInt32(header.type) {
        case NGHTTP2_SETTINGS.rawValue where header.flags & UInt8(NGHTTP2_FLAG_ACK.rawValue) == 0:
            delegate.sessionReceivedSettings(maxConcurrentStreams: peerMaxConcurrentStreams)
        case NGHTTP2_GOAWAY.rawValue:
            let goAway = frame.pointee.goaway
            var text = ""
            if let data = goAway.opaque_data, goAway.opaque_data_len > 0 {
                text = String(decoding: UnsafeBufferPointer(start: data, count: goAway.opaque_data_len), as: UTF8.self)
            }
            delegate.sessionReceivedGoAway(lastStreamID: goAway.last_stream_id, errorCode: goAway.error_code, debugData: text)
        case NGHTTP2_PING.rawValue where header.flags & UInt8(NGHTTP2_FLAG_ACK.rawValue) != 0:
            delegate.sessionReceivedPingAck()
        default:
            break
        }
    }

    fileprivate func streamClosed(id: Int32, errorCode: UInt32) {
        guard let stream = streams.removeValue(forKey: id) else { return }
        delegate.sessionClosed(stream: stream, errorCode: errorCode)
    }

    /// The response passed a limit: keep nothing more of it and reset the stream. Its close then
    /// reports the overflow (`sessionClosed`).
    fileprivate func refuseResponse(on stream: HTTP2Stream, _ what: String) {
        stream.overflow = what
        stream.body = []
        stream.headers = []
        _ = nghttp2_submit_rst_stream(raw, UInt8(NGHTTP2_FLAG_NONE.rawValue), stream.id, NGHTTP2_CANCEL.rawValue)
    }

    fileprivate func keeps(header name: UnsafeBufferPointer<UInt8>) -> Bool {
        guard let keptResponseHeaders else { return true }
        return keptResponseHeaders.contains { $0.elementsEqual(name) }
    }

    fileprivate func stream(for id: Int32) -> HTTP2Stream? {
        guard let user = nghttp2_session_get_stream_user_data(raw, id) else { return nil }
        return Unmanaged<HTTP2Stream>.fromOpaque(user).takeUnretainedValue()
    }
}

// MARK: - C trampolines: recover the session from user_data, translate, forward.

private func session(_ user: UnsafeMutableRawPointer?) -> NGHTTP2Session {
    Unmanaged<NGHTTP2Session>.fromOpaque(user!).takeUnretainedValue()
}

private let onFrameRecv: nghttp2_on_frame_recv_callback = { _, frame, user in
    guard let frame else { return 0 }
    session(user).frameReceived(frame)
    return 0
}

private let onHeader: nghttp2_on_header_callback = { _, frame, name, nameLength, value, valueLength, _, user in
    guard let frame, let name, let value else { return 0 }
    let owner = session(user)
    let nameBytes = UnsafeBufferPointer(start: name, count: nameLength)
    let valueBytes = UnsafeBufferPointer(start: value, count: valueLength)
    // Decide from the name first: headers nobody reads cost no stream lookup and no Strings.
    if nameLength == 7 && nameBytes.elementsEqual(":status".utf8) {
        guard let stream = owner.stream(for: frame.pointee.hd.stream_id) else { return 0 }
        var status = 0
        for digit in valueBytes where digit >= UInt8(ascii: "0") && digit <= UInt8(ascii: "9") {
            status = status * 10 + Int(digit - UInt8(ascii: "0"))
        }
        stream.status = status
    } else if nameBytes.first != UInt8(ascii: ":"), owner.keeps(header: nameBytes),
              let stream = owner.stream(for: frame.pointee.hd.stream_id), stream.request.keepsResponseHeaders, stream.overflow == nil {
        guard stream.headers.count < owner.limits.maxKeptHeaders else {
            owner.refuseResponse(on: stream, "had more than \(owner.limits.maxKeptHeaders) kept headers")
            return 0
        }
        guard valueLength <= owner.limits.maxHeaderValueBytes else {
            owner.refuseResponse(on: stream, "had a header value longer than \(owner.limits.maxHeaderValueBytes) bytes")
            return 0
        }
        stream.headers.append(HTTP2Header(name: String(decoding: nameBytes, as: UTF8.self),
                                          value: String(decoding: valueBytes, as: UTF8.self)))
    }
    return 0
}

private let onDataChunk: nghttp2_on_data_chunk_recv_callback = { _, _, streamID, data, length, user in
    let owner = session(user)
    guard let data, let stream = owner.stream(for: streamID), stream.overflow == nil else { return 0 }
    guard stream.body.count + length <= owner.limits.maxBodyBytes else {
        owner.refuseResponse(on: stream, "body passed \(owner.limits.maxBodyBytes) bytes")
        return 0
    }
    stream.body.append(contentsOf: UnsafeBufferPointer(start: data, count: length))
    return 0
}

private let onStreamClose: nghttp2_on_stream_close_callback = { _, streamID, errorCode, user in
    session(user).streamClosed(id: streamID, errorCode: errorCode)
    return 0
}

private let onFrameSend: nghttp2_on_frame_send_callback = { _, frame, user in
    guard let frame, UInt32(frame.pointee.hd.type) == NGHTTP2_HEADERS.rawValue,
          frame.pointee.headers.cat == NGHTTP2_HCAT_REQUEST,
          let stream = session(user).stream(for: frame.pointee.hd.stream_id) else { return 0 }
    stream.headersSent = true
    return 0
}

/// Request HEADERS nghttp2 will not send (e.g. after GOAWAY): the server never saw them.
private let onFrameNotSend: nghttp2_on_frame_not_send_callback = { _, frame, _, user in
    guard let frame, UInt32(frame.pointee.hd.type) == NGHTTP2_HEADERS.rawValue,
          frame.pointee.headers.cat == NGHTTP2_HCAT_REQUEST else { return 0 }
    session(user).streamClosed(id: frame.pointee.hd.stream_id, errorCode: NGHTTP2Session.refusedStream)
    return 0
}

/// Copies the next slice of the request body; the body array lives in the stream's request.
private let readBody: nghttp2_data_source_read_callback = { _, _, buffer, length, flags, source, _ in
    guard let buffer, let flags, let pointer = source?.pointee.ptr else {
        return Int(NGHTTP2_ERR_CALLBACK_FAILURE.rawValue)
    }
    let stream = Unmanaged<HTTP2Stream>.fromOpaque(pointer).takeUnretainedValue()
    let count = min(length, stream.request.body.count - stream.bodyOffset)
    stream.request.body.withUnsafeBufferPointer { body in
        buffer.update(from: body.baseAddress! + stream.bodyOffset, count: count)
    }
    stream.bodyOffset += count
    if stream.bodyOffset == stream.request.body.count {
        flags.pointee |= NGHTTP2_DATA_FLAG_EOF.rawValue
    }
    return count
}
