// A job body as it arrives from RabbitMQ. Rejections are expected; a crash is not, and neither is
// a rejection whose description (it goes into job.rejected and the dead-letter headers) is 4 KiB
// or longer. An accepted job must satisfy what the rest of the worker assumes of it, and survive
// being re-published (`PushJob.encoded()`, how chunks and retries go back to the queue).
import APNsCore
import PushCore

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let body = Array(UnsafeBufferPointer(start: data, count: size))
    let job: PushJob
    do {
        job = try JobParser.apns.parse(body, messageID: "fuzz-message", now: 1_700_000_000, makeID: { "generated" })
    } catch {
        let length = error.description.utf8.count
        precondition(length < 4096, "a rejection's description is \(length) bytes (field: \(error.field?.utf8.count ?? 0) bytes)")
        return 0
    }
    precondition(!job.id.isEmpty && job.id.utf8.count <= JobParser.maxIDLength, "accepted id of \(job.id.utf8.count) bytes")
    precondition(!job.tokens.isEmpty || !job.groups.isEmpty, "accepted a job with no devices")
    precondition([1, 5, 10].contains(job.apns.priority), "accepted priority \(job.apns.priority)")
    precondition(job.payload.count <= job.apns.pushType.maxPayloadBytes, "accepted a \(job.payload.count)-byte payload")
    guard case .object = try? JSONValue.parse(job.payload) else {
        preconditionFailure("the accepted payload is not a JSON object")
    }
    for token in job.tokens {
        let hex = token.identity.utf8
        precondition(hex.count % 2 == 0 && hex.count >= DeviceToken.minHexLength && hex.count <= DeviceToken.maxHexLength,
                     "accepted a token of \(hex.count) hex characters")
        precondition(hex.allSatisfy { (0x30...0x39).contains($0) || (0x61...0x66).contains($0) }, "accepted a token that is not lowercase hex")
    }
    precondition(job.groups.count <= JobParser.maxGroups, "accepted \(job.groups.count) groups")
    for text in [job.id, job.app, job.apns.topic ?? "", job.apns.collapseID ?? "", job.apns.pushType.rawValue] + job.groups {
        precondition(!text.utf8.contains { $0 < 0x20 || $0 == 0x7f }, "accepted a field with a control character")
    }

    // Chunks of a fan-out and retries are published as `job.encoded()` and parsed again: the same
    // job must come back (at another time, under another message id), tokens spelled as given.
    let again: PushJob
    do {
        again = try JobParser.apns.parse(job.encoded(), messageID: "other-message", now: 1_800_000_000, makeID: { "other" })
    } catch {
        preconditionFailure("the re-published job is rejected: \(error)")
    }
    precondition(again == job, "the re-published job differs")
    precondition(again.tokens.map(\.given) == job.tokens.map(\.given), "the re-published job spells its tokens differently")
    precondition(again.encoded() == job.encoded(), "encoding the re-published job gives other bytes")
    return 0
}
