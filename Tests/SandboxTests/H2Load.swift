/// The numbers h2load prints at the end of a run.
struct H2LoadSummary {
    var requestsPerSecond: Double = 0
    var succeeded = 0
    var failed = 0
    var status2xx = 0

    init(_ output: String) {
        for line in output.split(separator: "\n") {
            let words = line.split(whereSeparator: { $0 == " " || $0 == "," })
            if line.hasPrefix("finished in"), let index = words.firstIndex(of: "req/s") {
                self.requestsPerSecond = Double(words[index - 1]) ?? 0
            } else if line.hasPrefix("requests:") {
                self.succeeded = Self.number(before: "succeeded", in: words)
                self.failed = Self.number(before: "failed", in: words)
            } else if line.hasPrefix("status codes:") {
                self.status2xx = Self.number(before: "2xx", in: words)
            }
        }
    }

    private static func number(before word: Substring, in words: [Substring]) -> Int {
        guard let index = words.firstIndex(of: word), index > 0 else { return 0 }
        return Int(words[index - 1]) ?? 0
    }
}

extension SandboxHarness {
    /// h2load POSTing the standard notification with a provider token.
    func h2load(requests: Int, clients: Int, streams: Int, extra: [String] = []) async throws -> (H2LoadSummary, ExternalTool.Result) {
        let body = try self.writeFile("h2load-body.json", Self.payload)
        let result = try await ExternalTool.run("h2load", [
            "-n", "\(requests)", "-c", "\(clients)", "-m", "\(streams)", "-d", body,
            "-H", "authorization: bearer \(try self.providerToken())",
            "-H", "apns-topic: com.example.app", "-H", "apns-push-type: alert",
        ] + extra + [self.url()], timeout: .seconds(300))
        return (H2LoadSummary(result.stdout), result)
    }
}
