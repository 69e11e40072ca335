import Foundation
import Sandbox
import Testing
import Worker
import WorkerConfigurationFile

/// One worker serving two apps from a configuration file, against the sandbox and the real
/// RabbitMQ and Redis: each app's notifications leave with its own topic and credentials, on
/// connections of its own.
@Suite(.serialized, .timeLimit(.minutes(3)))
struct ManyAppsTests {
    @Test func twoAppsFromOneFileEachWithItsOwnTopicCredentialsAndConnections() async throws {
        try await PipelineFixture.with { fixture in
            let material = fixture.sandbox.material
            let directory = NSTemporaryDirectory() + "pushworker-many-apps-\(fixture.name)"
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
            defer { try? FileManager.default.removeItem(atPath: directory) }
            let path = directory + "/pushworker.yaml"
            try """
                amqp:
                  url: \(PipelineFixture.amqpURL)
                redis:
                  url: \(PipelineFixture.redisURL)
                worker:
                  job_queue: \(fixture.jobQueue)
                  results_exchange: \(fixture.resultsExchange)
                  group_key_prefix: "\(fixture.groupPrefix)"
                  retry_delays: [300ms]
                  shutdown_timeout: 5s
                  unknown_app_grace: 0s         # no rollout here: an app not in the file is a mistake
                apps:
                  - name: news
                    platform: apns
                    url: https://127.0.0.1:\(fixture.port)
                    ca_file: \(material.caCertificateFile)
                    topic: com.example.news
                    max_connections: 1
                    request_timeout: 5s
                    token:
                      key: {env: NEWS_APNS_KEY_BASE64, base64: true}
                      key_id: \(material.tokenKeyID)
                      team_id: \(material.teamID)
                  - name: shop
                    platform: apns
                    url: https://127.0.0.1:\(fixture.port)
                    ca_file: \(material.caCertificateFile)
                    topic: \(SandboxGeneratedMaterial.clientBundleID)
                    max_connections: 1
                    request_timeout: 5s
                    certificate:
                      cert_file: \(material.clientCertificateFile)
                      key_file: \(material.clientPrivateKeyFile)
                """.write(toFile: path, atomically: true, encoding: .utf8)
            let key = try Data(contentsOf: URL(fileURLWithPath: material.tokenKeyFile)).base64EncodedString()
            let loaded = try ConfigurationLoader.load(try ConfigurationFileReader.read(path: path),
                                                      environment: ["NEWS_APNS_KEY_BASE64": key])
            #expect(loaded.worker.apps.keys.sorted() == ["news", "shop"])
            #expect(loaded.worker.unknownAppGrace == .zero)
            try fixture.startWorker(loaded.worker)

            let newsTokens = (1...3).map(PipelineFixture.token)
            let shopTokens = (11...12).map(PipelineFixture.token)
            try await fixture.publish(#"{"id":"news-1","app":"news","tokens":["\#(newsTokens.joined(separator: "\",\""))"],"payload":{"aps":{"alert":"news"}}}"#)
            try await fixture.publish(#"{"id":"shop-1","app":"shop","tokens":["\#(shopTokens.joined(separator: "\",\""))"],"payload":{"aps":{"alert":"shop"}}}"#)
            try await fixture.publish(#"{"id":"other-1","app":"other","tokens":["\#(PipelineFixture.token(21))"],"payload":{"aps":{"alert":"x"}}}"#)

            let events = try await fixture.events {
                $0.filter { $0.routingKey == "job.completed" }.count == 2 && $0.contains { $0.routingKey == "job.rejected" }
            }
            let completed = events.filter { $0.routingKey == "job.completed" }
            let completedJobIDs = Set(completed.compactMap { $0.string("job_id") })
            #expect(completedJobIDs == ["news-1", "shop-1"])
            let eachJobSentAll = completed.allSatisfy { $0.int("sent") == ($0.string("job_id") == "news-1" ? 3 : 2) }
            #expect(eachJobSentAll)
            let rejectedEvent = events.first { $0.routingKey == "job.rejected" }
            let rejected = try #require(rejectedEvent)
            #expect(rejected.string("error")?.contains("unknown app \"other\"") == true)

            let received = fixture.sandbox.received()
            let news = received.filter { newsTokens.contains($0.token) }
            let shop = received.filter { shopTokens.contains($0.token) }
            #expect(news.count == 3 && shop.count == 2)
            let newsByTokenKey = news.allSatisfy {
                $0.status == 200 && $0.topic == "com.example.news" && $0.authentication == "token:\(material.tokenKeyID)"
            }
            #expect(newsByTokenKey)
            let shopByCertificate = shop.allSatisfy { $0.status == 200 && $0.topic == SandboxGeneratedMaterial.clientBundleID
                    && $0.authentication == "certificate:\(SandboxGeneratedMaterial.clientBundleID)" }
            #expect(shopByCertificate)
            // One pool per app: no connection carried both apps' requests.
            #expect(Set(news.map(\.connectionID)).isDisjoint(with: Set(shop.map(\.connectionID))))
            let otherAppDelivered = received.contains { $0.token == PipelineFixture.token(21) }
            #expect(!otherAppDelivered)
        }
    }
}
