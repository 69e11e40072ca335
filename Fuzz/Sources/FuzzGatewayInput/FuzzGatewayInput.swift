// Bytes for the gateway's two translations (Sources/GatewayCore). The first byte picks what the
// rest is: "r" a pushd registration packet, "n" a pushd notification packet, "a"/"b" a relay
// request with fixed aesgcm / aes128gcm headers (the first line is the path, the rest the body),
// "h" a relay request whose header values come from the input too (Content-Encoding, Encryption,
// Crypto-Key, TTL, Urgency, Topic, then the path, one line each, then the body); any other byte
// picks one of these by its value. Refusals are expected; a crash is not, nor a refusal of 4 KiB
// or more, nor a relay status other than 400, 404, 413 and 415. What is accepted must be a job the
// worker's parser takes with APNs rules; a relayed payload must fit APNs' 4,096 bytes and carry
// the body, which must be no larger than maxBodyBytes. Extended Z85 round-trips the body, and any
// text it decodes is the one encoding of its bytes.
import APNsCore
import GatewayCore
import PushCore

let parser = JobParser(rules: APNsJobRules())
let token = String(repeating: "ab", count: 32)
let now = 1_700_000_000

func workerJob(_ body: [UInt8]) -> PushJob {
    do {
        return try parser.parse(body, messageID: nil, now: now, makeID: { "generated" })
    } catch {
        preconditionFailure("the worker rejects a job the gateway made: \(error)")
    }
}

func lines(_ bytes: ArraySlice<UInt8>, count: Int) -> (lines: [String], rest: [UInt8]) {
    var lines = [String]()
    var rest = bytes
    while lines.count < count {
        guard let end = rest.firstIndex(of: UInt8(ascii: "\n")) else {
            lines.append(String(decoding: rest, as: UTF8.self))
            rest = []
            continue
        }
        lines.append(String(decoding: rest[rest.startIndex..<end], as: UTF8.self))
        rest = rest[(end + 1)...]
    }
    return (lines, Array(rest))
}

func relay(path: String, headers: [String: String], body: [UInt8]) {
    let job: RelayJob
    do {
        job = try WebPushRelay.job(path: path, header: { name in headers.first { $0.key.lowercased() == name.lowercased() }?.value },
                                   body: body, app: { $0 == .production ? "toot" : "toot-dev" }, jobID: "relay-1", now: now)
    } catch {
        precondition([400, 404, 413, 415].contains(error.status), "relay status \(error.status)")
        precondition(error.message.utf8.count < 4096, "a relay refusal of \(error.message.utf8.count) bytes")
        return
    }
    precondition(body.count <= WebPushRelay.maxBodyBytes, "relayed a body of \(body.count) bytes")
    let parsed = workerJob(job.body)
    precondition(parsed.tokens.map(\.identity) == [job.token], "the job names another device")
    precondition(parsed.payload.count <= WebPushRelay.maxPayloadBytes, "a payload of \(parsed.payload.count) bytes")
    guard case let .object(payload) = try? JSONValue.parse(parsed.payload), case let .string(p)? = payload["p"] else {
        preconditionFailure("the payload has no p")
    }
    precondition(ExtendedZ85.decode(p) == body, "p is not the body")
}

func pushd(_ bytes: [UInt8], notification: Bool) {
    if notification {
        let job: [UInt8]
        do { job = try PushdPacket.notificationJob(bytes, app: "ios", jobID: "pushd-1") } catch {
            precondition(error.message.utf8.count < 4096, "a pushd refusal of \(error.message.utf8.count) bytes")
            return
        }
        precondition(!workerJob(job).groups.isEmpty, "a notification job without groups")
    } else {
        let registration: PushdRegistration
        do { registration = try PushdPacket.registration(bytes) } catch {
            precondition(error.message.utf8.count < 4096, "a pushd refusal of \(error.message.utf8.count) bytes")
            return
        }
        precondition((try? DeviceToken(validating: registration.device))?.identity == registration.device, "the device does not read back")
        precondition(!registration.group.isEmpty, "an empty group")
    }
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let input = Array(UnsafeBufferPointer(start: data, count: size))
    guard let first = input.first else { return 0 }
    let rest = input[1...]

    let encoded = ExtendedZ85.encode(rest)
    precondition(ExtendedZ85.decode(encoded) == Array(rest), "extended Z85 does not round-trip")
    let text = String(decoding: rest, as: UTF8.self)
    if let decoded = ExtendedZ85.decode(text) {
        precondition(ExtendedZ85.encode(decoded) == text, "a second encoding of the same bytes decodes")
    }

    let modes: [UInt8] = Array("rnabh".utf8)
    switch modes.contains(first) ? first : modes[Int(first) % modes.count] {
    case UInt8(ascii: "r"): pushd(Array(rest), notification: false)
    case UInt8(ascii: "n"): pushd(Array(rest), notification: true)
    case UInt8(ascii: "a"):
        let (path, body) = lines(rest, count: 1)
        relay(path: path[0], headers: [
            "Content-Encoding": "aesgcm", "TTL": "60",
            "Encryption": "salt=oKGio6SlpqeoqaqrrK2urw", "Crypto-Key": "dh=BAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8gISIjJCUmJygpKissLS4vMDEyMzQ1Njc4OTo7PD0-P0A",
        ], body: body)
    case UInt8(ascii: "b"):
        let (path, body) = lines(rest, count: 1)
        relay(path: path[0], headers: ["Content-Encoding": "aes128gcm", "TTL": "0", "Urgency": "low", "Topic": "status"], body: body)
    default:
        let (values, body) = lines(rest, count: 7)
        let names = ["Content-Encoding", "Encryption", "Crypto-Key", "TTL", "Urgency", "Topic"]
        var headers = [String: String]()
        // An empty line leaves the header out.
        for (name, value) in zip(names, values) where !value.isEmpty { headers[name] = value }
        relay(path: values[6], headers: headers, body: body)
    }
    return 0
}
