// A job body for a fleet of three apps, one per platform (app "ios": APNs, "android": FCM, "web":
// Web Push): the app picks the rules. Rejections are expected; a crash is not, nor a rejection
// description of 4 KiB or more. An accepted job names devices its platform can read again, and
// survives being re-published (`PushJob.encoded()`, how chunks and retries go back) unchanged.
import APNsCore
import FCMCore
import PushCore
import WebPushCore

let parser = JobParser(platforms: [APNsJobRules(), WebPushJobRules(), FCMJobRules()])
let apps: [String: any PlatformJobRules] = ["ios": APNsJobRules(), "android": FCMJobRules(), "web": WebPushJobRules()]

func parse(_ body: [UInt8], now: Int) throws(JobRejection) -> PushJob {
    try parser.parse(body, messageID: "fuzz-message", now: now, makeID: { "generated" }) { (app: String) throws(JobRejection) in
        guard let rules = apps[app] else { throw JobRejection(field: "app", "unknown app") }
        return rules
    }
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let body = Array(UnsafeBufferPointer(start: data, count: size))
    let job: PushJob
    do {
        job = try parse(body, now: 1_700_000_000)
    } catch {
        let length = error.description.utf8.count
        precondition(length < 4096, "a rejection's description is \(length) bytes")
        return 0
    }
    precondition(!job.tokens.isEmpty || !job.groups.isEmpty, "accepted a job with no devices")
    guard case .object = try? JSONValue.parse(job.payload) else {
        preconditionFailure("the accepted payload is not a JSON object")
    }
    let rules = apps[job.app]!
    for token in job.tokens {
        // What chunk jobs and group members carry is the device as given: it must read back the same.
        guard let again = try? rules.device(from: .string(token.given)) else {
            preconditionFailure("the \(rules.platformName) device as given does not read back")
        }
        precondition(again.identity == token.identity, "the device as given reads back as another device")
    }
    let again: PushJob
    do {
        again = try parse(job.encoded(), now: 1_800_000_000)
    } catch {
        preconditionFailure("the re-published job is rejected: \(error)")
    }
    precondition(again == job, "the re-published job differs")
    precondition(again.encoded() == job.encoded(), "encoding the re-published job gives other bytes")
    return 0
}
