import APNs
import APNsCore
import Foundation
import Testing
import Worker
@testable import WorkerConfigurationFile

/// `push_type_rules` on an APNs app: reject by default, warn when set, anything else an error that
/// names the field; `config check` prints it.
@Suite struct PushTypeRulesSettingTests {
    @Test func warnIsReadPrintedAndADefaultIsReject() throws {
        let material = try TestMaterial()
        defer { material.remove() }
        let key = try material.tokenKey()
        let text = "apps:\n" + ConfigurationFileTests.tokenApp(name: "live", keyFile: key) + "\n    push_type_rules: warn\n"
            + ConfigurationFileTests.tokenApp(name: "news", keyFile: key, topic: "com.example.other")
        let loaded = try ConfigurationLoader.load(try ConfigurationFileReader.parse(text, path: "pushworker.yaml"), environment: [:])
        #expect(loaded.worker.apnsApps["live"]?.pushTypeRules == .warn)
        #expect(loaded.worker.apnsApps["news"]?.pushTypeRules == .reject)
        let printed = EffectiveConfigurationText.render(loaded)
        #expect(printed.contains("push_type_rules: warn") && printed.contains("push_type_rules: reject"))
    }

    @Test func anUnknownValueNamesTheField() throws {
        let material = try TestMaterial()
        defer { material.remove() }
        let key = try material.tokenKey()
        let text = "apps:\n" + ConfigurationFileTests.tokenApp(name: "live", keyFile: key) + "\n    push_type_rules: ignore\n"
        do {
            _ = try ConfigurationLoader.load(try ConfigurationFileReader.parse(text, path: "pushworker.yaml"), environment: [:])
            Issue.record("push_type_rules: ignore was taken")
        } catch {
            #expect(error.findings.contains { $0.field == "apps[0].push_type_rules" && $0.message.contains("reject, warn") },
                    "\(error.findings)")
        }
    }
}
