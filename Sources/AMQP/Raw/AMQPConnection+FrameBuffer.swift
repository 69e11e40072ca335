internal import CRabbitMQ
#if canImport(Glibc)
import Glibc
#endif

/// Publishes, acks and nacks collected as frames and written with one send() per pass of the
/// owner thread. rabbitmq-c writes every frame with its own send() (three for a publish: method,
/// content header, body), which was most of the worker's system calls. The method arguments and
/// the properties are still encoded by rabbitmq-c (`amqp_encode_method`, `amqp_encode_properties`);
/// only the frame envelope of AMQP 0-9-1 §4.2.3 (type, channel, size, payload, 0xCE) is ours.
/// TLS connections have no plain socket to write to, so there every frame goes through rabbitmq-c.
extension AMQPConnection {
    private static let methodFrame: UInt8 = 1
    private static let headerFrame: UInt8 = 2
    private static let bodyFrame: UInt8 = 3
    private static let frameEnd: UInt8 = 0xCE
    /// Type, channel and size before the payload, and the end octet after it.
    private static let frameOverhead = 8
    /// A write that makes no progress for this long means the broker stopped reading.
    private static let stalledWriteMilliseconds: Int32 = 60_000

    /// Encoded but not yet written bytes; written by `flushFrames()`.
    var hasBufferedFrames: Bool { !frameBuffer.isEmpty }

    /// Encoding problems throw without buffering or writing anything (`isBroken` stays false);
    /// a failed write breaks the connection.
    func publish(
        channel: UInt16, exchange: String, routingKey: String, body: [UInt8],
        properties: AMQPProperties, mandatory: Bool
    ) throws(AMQPError) {
        guard buffersFrames else {
            return try publishThroughLibrary(channel: channel, exchange: exchange, routingKey: routingKey, body: body,
                                             properties: properties, mandatory: mandatory)
        }
        defer { recycleScratch() }
        var method = amqp_basic_publish_t(
            ticket: 0, exchange: try scratchBytes(exchange), routing_key: try scratchBytes(routingKey),
            mandatory: mandatory ? 1 : 0, immediate: 0)
        var rawProperties = try encode(properties: properties)
        // Both encoded before anything is appended: a failure leaves the buffer as it was.
        let methodLength = try encodeMethod(AMQP_BASIC_PUBLISH_METHOD, &method, at: 0)
        let propertiesLength = amqp_encode_properties(
            UInt16(AMQP_BASIC_CLASS), &rawProperties,
            amqp_bytes_t(len: Int(Self.frameMax), bytes: frameScratch + Int(Self.frameMax)))
        guard propertiesLength >= 0 else {
            throw AMQPError(code: .library, status: propertiesLength,
                            message: "basic.publish properties: \(Self.describe(propertiesLength))")
        }
        appendFrame(Self.methodFrame, channel: channel, methodID: AMQP_BASIC_PUBLISH_METHOD,
                    scratchOffset: 0, count: methodLength)

        // Content header: class, weight 0, body size, then the encoded property flags and list.
        appendFrameStart(Self.headerFrame, channel: channel, payloadSize: 12 + Int(propertiesLength))
        appendBigEndian(UInt16(AMQP_BASIC_CLASS))
        appendBigEndian(UInt16(0))
        appendBigEndian(UInt64(body.count))
        frameBuffer.append(contentsOf: UnsafeRawBufferPointer(start: frameScratch + Int(Self.frameMax), count: Int(propertiesLength)))
        frameBuffer.append(Self.frameEnd)

        let maxBodyPayload = Int(amqp_get_frame_max(state)) - Self.frameOverhead
        var offset = 0
        while offset < body.count {
            let end = min(body.count, offset + maxBodyPayload)
            appendFrameStart(Self.bodyFrame, channel: channel, payloadSize: end - offset)
            frameBuffer.append(contentsOf: body[offset..<end])
            frameBuffer.append(Self.frameEnd)
            offset = end
        }
    }

    func ack(channel: UInt16, deliveryTag: UInt64, multiple: Bool) throws(AMQPError) {
        guard buffersFrames else {
            return try checkWrite(amqp_basic_ack(state, channel, deliveryTag, multiple ? 1 : 0), "basic.ack")
        }
        var method = amqp_basic_ack_t(delivery_tag: deliveryTag, multiple: multiple ? 1 : 0)
        let length = try encodeMethod(AMQP_BASIC_ACK_METHOD, &method, at: 0)
        appendFrame(Self.methodFrame, channel: channel, methodID: AMQP_BASIC_ACK_METHOD, scratchOffset: 0, count: length)
    }

    func nack(channel: UInt16, deliveryTag: UInt64, multiple: Bool, requeue: Bool) throws(AMQPError) {
        guard buffersFrames else {
            return try checkWrite(amqp_basic_nack(state, channel, deliveryTag, multiple ? 1 : 0, requeue ? 1 : 0), "basic.nack")
        }
        var method = amqp_basic_nack_t(delivery_tag: deliveryTag, multiple: multiple ? 1 : 0, requeue: requeue ? 1 : 0)
        let length = try encodeMethod(AMQP_BASIC_NACK_METHOD, &method, at: 0)
        appendFrame(Self.methodFrame, channel: channel, methodID: AMQP_BASIC_NACK_METHOD, scratchOffset: 0, count: length)
    }

    /// Writes what was buffered, all of it: a partial frame would corrupt the stream. Must run
    /// before rabbitmq-c writes anything itself, so frames keep their order.
    func flushFrames() throws(AMQPError) {
        guard !frameBuffer.isEmpty else { return }
        let descriptor = socketDescriptor
        let failure: Int32? = frameBuffer.withUnsafeBytes { bytes in
            var sent = 0
            while sent < bytes.count {
                let count = send(descriptor, bytes.baseAddress! + sent, bytes.count - sent, Int32(MSG_NOSIGNAL))
                if count > 0 {
                    sent += count
                    continue
                }
                let error = count == 0 ? ECONNRESET : errno
                if error == EINTR { continue }
                guard error == EAGAIN || error == EWOULDBLOCK else { return error }
                // rabbitmq-c's socket is non-blocking: wait for room, as its own sends do.
                var waiting = pollfd(fd: descriptor, events: Int16(POLLOUT), revents: 0)
                if poll(&waiting, 1, Self.stalledWriteMilliseconds) == 0 { return ETIMEDOUT }
            }
            return nil
        }
        // Large bursts (a fan-out's chunk jobs) should not pin their peak size.
        frameBuffer.removeAll(keepingCapacity: frameBuffer.capacity <= 1 << 20)
        if let failure {
            isBroken = true
            throw AMQPError(code: .connectionLost, status: failure,
                            message: "writing to the broker failed: \(String(cString: strerror(failure)))")
        }
    }

    private func publishThroughLibrary(
        channel: UInt16, exchange: String, routingKey: String, body: [UInt8],
        properties: AMQPProperties, mandatory: Bool
    ) throws(AMQPError) {
        defer { recycleScratch() }
        let exchangeBytes = try scratchBytes(exchange)
        let routingKeyBytes = try scratchBytes(routingKey)
        var rawProperties = try encode(properties: properties)
        let status = body.withUnsafeBytes { buffer in
            // rabbitmq-c only reads the body; it splits it into frame_max-sized body frames.
            let bodyBytes = amqp_bytes_t(len: buffer.count, bytes: UnsafeMutableRawPointer(mutating: buffer.baseAddress))
            return amqp_basic_publish(state, channel, exchangeBytes, routingKeyBytes, mandatory ? 1 : 0, 0,
                                      &rawProperties, bodyBytes)
        }
        try checkWrite(status, "basic.publish")
    }

    /// Encodes a method's arguments into the scratch area; returns their length.
    private func encodeMethod<Method>(_ id: amqp_method_number_t, _ method: inout Method, at offset: Int) throws(AMQPError) -> Int {
        let length = withUnsafeMutablePointer(to: &method) { pointer in
            amqp_encode_method(id, pointer,
                               amqp_bytes_t(len: Int(Self.frameMax), bytes: frameScratch + offset))
        }
        guard length >= 0 else {
            throw AMQPError(code: .library, status: length, message: "encoding method \(id): \(Self.describe(length))")
        }
        return Int(length)
    }

    private func appendFrame(_ type: UInt8, channel: UInt16, methodID: amqp_method_number_t, scratchOffset: Int, count: Int) {
        appendFrameStart(type, channel: channel, payloadSize: 4 + count)
        appendBigEndian(methodID)
        frameBuffer.append(contentsOf: UnsafeRawBufferPointer(start: frameScratch + scratchOffset, count: count))
        frameBuffer.append(Self.frameEnd)
    }

    private func appendFrameStart(_ type: UInt8, channel: UInt16, payloadSize: Int) {
        frameBuffer.append(type)
        appendBigEndian(channel)
        appendBigEndian(UInt32(payloadSize))
    }

    private func appendBigEndian<Integer: FixedWidthInteger>(_ value: Integer) {
        withUnsafeBytes(of: value.bigEndian) { frameBuffer.append(contentsOf: $0) }
    }
}
