import PlatformCatalog
import PushCore
import Testing

/// The catalog names each platform once, with the rules its jobs are read by.
@Suite struct PlatformCatalogTests {
    @Test func eachPlatformHasItsOwnRulesUnderItsName() {
        #expect(Platform.allCases.map(\.rawValue) == ["apns", "fcm", "webpush"])
        #expect(Platform.allJobRules.count == Platform.allCases.count)
        #expect(Platform.choices == "apns, fcm or webpush")
        // The rules tell the platforms apart by their tokens: an APNs token is none of the others'.
        let apnsToken = String(repeating: "ab", count: 32)
        #expect((try? Platform.apns.jobRules.device(from: .string(apnsToken))) != nil)
        #expect((try? Platform.webpush.jobRules.device(from: .string(apnsToken))) == nil)
    }
}
