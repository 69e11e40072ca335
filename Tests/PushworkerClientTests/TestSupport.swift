import Foundation
import PushCore
import Testing
@testable import PushworkerClient

/// Devices each platform's rules accept.
enum Devices {
    static let apnsToken = String(repeating: "ab", count: 32)
    static let fcmToken = "dV1lY2Fyb2xpbmE:APA91bHun4MxP5egoKMwt2KZFBaFUH-1RYqx"
    static let webEndpoint = "https://push.example.net/wp/abc"
    static let webP256dh = "BCVxsr7N_eNgVRqvHtD0zTZsEc6-VV-JvLexhqUzORcxaOzi6-AYWXvTBHm4bjyPjs7Vd8pZGH6SRpkNtoIAiw4"
    static let webAuth = "BTBZMqHH6r4Tts7J_aSIgg"
    static var webCompact: String { "\(webEndpoint)#p256dh=\(webP256dh)&auth=\(webAuth)" }
}

/// A job's JSON read back as a value: member order does not matter, everything else does.
func parsedJSON(_ job: PushworkerJob) throws -> [String: JSONValue] {
    let value = try JSONValue.parse(try job.json())
    guard case .object(let members) = value else { throw TestFailure("a job is a JSON object, got \(value.typeName)") }
    return members
}

/// The job's `payload.aps`.
func aps(_ payload: APNsPayload) throws -> [String: JSONValue] {
    let job = PushworkerJob.apns(payload, tokens: [Devices.apnsToken])
    guard case .object(let payloadMembers)? = try parsedJSON(job)["payload"], case .object(let aps)? = payloadMembers["aps"] else {
        throw TestFailure("no payload.aps object")
    }
    return aps
}

/// A literal JSON text as a value, for comparing with what the builders wrote.
func json(_ text: String) throws -> JSONValue {
    try JSONValue.parse(Array(text.utf8))
}

struct TestFailure: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
