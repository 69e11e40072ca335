import APNsCore
import PushCore
import Testing
@testable import GatewayCore

/// toot-relay's translation of a Web Push request into an APNs job; every job made here is read
/// back with the worker's parser and APNs rules.
@Suite struct WebPushRelayTests {
    @Test func anAESGCMMessageBecomesTootRelaysPayload() throws {
        let body: [UInt8] = Array(0..<200)
        let job = try relay(path: "/relay-to/production/\(Fixture.token)/account/42", body: body)
        #expect(job.environment == .production)
        #expect(job.token == Fixture.token)
        let parsed = try workerJob(job.body)
        #expect(parsed.id == Fixture.jobID)
        #expect(parsed.app == "toot")
        #expect(parsed.tokens.map(\.identity) == [Fixture.token])
        #expect(parsed.apns == APNsJobOptions(pushType: .alert, priority: 10))
        #expect(parsed.expiration == Fixture.now + 60)

        let payload = try payloadObject(parsed)
        #expect(payload["aps"] == .object(["alert": .string("🎺"), "mutable-content": .int(1), "content-available": .int(1)]))
        #expect(string(payload["p"]).flatMap(ExtendedZ85.decode) == body)
        #expect(string(payload["k"]).flatMap(ExtendedZ85.decode) == Fixture.senderKey)
        #expect(string(payload["s"]).flatMap(ExtendedZ85.decode) == Fixture.salt)
        #expect(payload["x"] == .string("account/42"))
        #expect(payload["e"] == nil)
        #expect(Set(payload.keys) == ["aps", "p", "k", "s", "x"])
        // The payload as written: compact, in toot-relay's member order, the emoji as UTF-8.
        #expect(text(parsed.payload).hasPrefix(#"{"aps":{"alert":"🎺","mutable-content":1,"content-available":1},"p":""#))
        #expect(parsed.payload.count == RelayPayload.size(bodyBytes: body.count, extraBytes: 10, encoding: .aesgcm))
    }

    @Test func theDevelopmentEnvironmentGoesToItsApp() throws {
        let job = try relay(path: "/relay-to/development/\(Fixture.token.uppercased())")
        #expect(job.environment == .development)
        #expect(job.token == Fixture.token)  // lowercase, as APNs is sent
        #expect(try workerJob(job.body).app == "toot-dev")
    }

    @Test func withoutAnExtraPartThereIsNoX() throws {
        for path in ["/relay-to/production/\(Fixture.token)", "/relay-to/production/\(Fixture.token)/", "/relay-to/production/\(Fixture.token)?x=1"] {
            let payload = try payloadObject(try workerJob(try relay(path: path).body))
            #expect(payload["x"] == nil, "\(path)")
        }
    }

    @Test func theExtraPartIsPercentDecodedSegmentBySegment() throws {
        let job = try relay(path: "/relay-to/production/\(Fixture.token)/caf%C3%A9/a%2Fb/%20")
        #expect(try payloadObject(try workerJob(job.body))["x"] == .string("café/a/b/ "))
        let token = try relay(path: "/relay-to/production/%61%62" + Fixture.token.dropFirst(2))
        #expect(token.token == Fixture.token)
    }

    @Test func aesgcmHeadersInTheirSeveralSpellings() throws {
        let saltPadded = Fixture.base64url(Fixture.salt, padded: true)
        let key = Fixture.base64url(Fixture.senderKey)
        let spellings: [(encryption: String, cryptoKey: String)] = [
            ("salt=\(saltPadded)", "dh=\(key)"),
            ("salt=\(saltPadded);rs=4096", "dh=\(key);p256ecdsa=BBBB"),
            (#"keyid="p256dh"; salt="\#(saltPadded)""#, #"keyid="p256dh"; dh="\#(key)""#),
            ("keyid=a;salt=\(saltPadded)", "keyid=b;dh=AAAA, keyid=a;dh=\(key)"),
            ("rs=4096, salt=\(saltPadded)", "p256ecdsa=BBBB, dh=\(key)"),
            ("SALT=\(saltPadded)", "DH=\(Base64.encode(Fixture.senderKey))"),
        ]
        for spelling in spellings {
            var headers = Fixture.aesgcmHeaders
            headers["Encryption"] = spelling.encryption
            headers["Crypto-Key"] = spelling.cryptoKey
            let payload = try payloadObject(try workerJob(try relay(headers: headers).body))
            #expect(string(payload["k"]).flatMap(ExtendedZ85.decode) == Fixture.senderKey, "\(spelling)")
            #expect(string(payload["s"]).flatMap(ExtendedZ85.decode) == Fixture.salt, "\(spelling)")
        }
    }

    @Test func anAES128GCMMessageCarriesItsWholeBodyAndTheKeysFromItsHeader() throws {
        let body = Fixture.aes128gcmBody()
        let job = try relay(headers: ["Content-Encoding": "aes128gcm", "TTL": "0"], body: body)
        let parsed = try workerJob(job.body)
        #expect(parsed.expiration == 0)
        let payload = try payloadObject(parsed)
        #expect(string(payload["p"]).flatMap(ExtendedZ85.decode) == body)
        #expect(string(payload["k"]).flatMap(ExtendedZ85.decode) == Fixture.senderKey)
        #expect(string(payload["s"]).flatMap(ExtendedZ85.decode) == Fixture.salt)
        #expect(payload["e"] == .string("aes128gcm"))
        #expect(parsed.payload.count == RelayPayload.size(bodyBytes: body.count, extraBytes: nil, encoding: .aes128gcm))
        // The aesgcm headers are not read for aes128gcm.
        var headers = Fixture.aesgcmHeaders
        headers["Content-Encoding"] = " AES128GCM "
        headers["Encryption"] = "salt=nonsense"
        #expect(try workerJob(try relay(headers: headers, body: body).body).payload == parsed.payload)
    }

    @Test func anotherContentEncodingIs415() throws {
        var headers = Fixture.aesgcmHeaders
        headers["Content-Encoding"] = nil
        let missing = try refusal(headers: headers)
        #expect(missing.status == 415)
        #expect(missing.message.contains("Content-Encoding is missing") && missing.message.contains("aesgcm") && missing.message.contains("aes128gcm"))
        headers["Content-Encoding"] = "gzip"
        let other = try refusal(headers: headers)
        #expect(other.status == 415)
        #expect(other.message.contains(#""gzip""#) && other.message.contains("aes128gcm"))
    }

    @Test func theTTLIsTheExpirationCappedAtThirtyDays() throws {
        let cases: [(ttl: String?, expiration: Int)] = [
            (nil, 0), ("0", 0), ("1", Fixture.now + 1), (" 3600 ", Fixture.now + 3600),
            ("2592000", Fixture.now + 2_592_000), ("2592001", Fixture.now + 2_592_000),
            ("99999999999999999999999", Fixture.now + 2_592_000),
        ]
        for (ttl, expiration) in cases {
            var headers = Fixture.aesgcmHeaders
            headers["TTL"] = ttl
            #expect(try workerJob(try relay(headers: headers).body).expiration == expiration, "TTL \(ttl ?? "absent")")
        }
        for ttl in ["-1", "1.5", "abc", "", "+5", "0x10"] {
            var headers = Fixture.aesgcmHeaders
            headers["TTL"] = ttl
            let refused = try refusal(headers: headers)
            #expect(refused.status == 400)
            #expect(refused.message.hasPrefix("header TTL:"), "\(refused)")
        }
    }

    @Test func theUrgencyIsThePriority() throws {
        let cases: [(urgency: String?, priority: Int)] = [(nil, 10), ("very-low", 5), ("low", 5), ("normal", 10), ("high", 10), ("High", 10)]
        for (urgency, priority) in cases {
            var headers = Fixture.aesgcmHeaders
            headers["Urgency"] = urgency
            #expect(try workerJob(try relay(headers: headers).body).apns.priority == priority, "Urgency \(urgency ?? "absent")")
        }
        var headers = Fixture.aesgcmHeaders
        headers["Urgency"] = "very-high"
        let refused = try refusal(headers: headers)
        #expect(refused.status == 400 && refused.message.hasPrefix("header Urgency:"))
    }

    @Test func theTopicIsTheCollapseID() throws {
        var headers = Fixture.aesgcmHeaders
        headers["Topic"] = "status_1-" + String(repeating: "a", count: 23)
        #expect(try workerJob(try relay(headers: headers).body).apns.collapseID == headers["Topic"])
        for topic in [String(repeating: "a", count: 33), "a b", "a=", "", "é"] {
            headers["Topic"] = topic
            let refused = try refusal(headers: headers)
            #expect(refused.status == 400 && refused.message.hasPrefix("header Topic:"), "\(topic)")
        }
    }

    @Test func aPathThatIsNoRelayPathIs404() throws {
        for path in ["/", "/relay-to", "/relay-to/", "/relay/production/\(Fixture.token)", "/relay-to/staging/\(Fixture.token)",
                     "/relay-to/Production/\(Fixture.token)", "/relay-to/production"] {
            #expect(try refusal(path: path).status == 404, "\(path)")
        }
    }

    @Test func aBadTokenIs400NamingThePathSegment() throws {
        for path in ["/relay-to/production/", "/relay-to/production/abc", "/relay-to/production/\(Fixture.token)0",
                     "/relay-to/production/%zz\(Fixture.token)", "/relay-to/production/\(String(repeating: "g", count: 64))"] {
            let refused = try refusal(path: path)
            #expect(refused.status == 400)
            #expect(refused.message.hasPrefix("path segment <device-token>:"), "\(refused)")
        }
    }

    @Test func anExtraPartIsCappedAndWrittenUnescaped() throws {
        let longest = String(repeating: "x", count: WebPushRelay.maxExtraBytes)
        #expect(try payloadObject(try workerJob(try relay(path: "/relay-to/production/\(Fixture.token)/\(longest)").body))["x"] == .string(longest))
        for extra in [longest + "x", "a%22b", "a%5Cb", "a%0Ab", "%ff", "%4"] {
            let refused = try refusal(path: "/relay-to/production/\(Fixture.token)/\(extra)")
            #expect(refused.status == 400)
            #expect(refused.message.hasPrefix("path segment <extra>:"), "\(refused)")
        }
    }

    @Test func anEmptyBodyIs400() throws {
        let refused = try refusal(body: [])
        #expect(refused.status == 400 && refused.message.hasPrefix("body:"))
    }

    @Test func badAESGCMHeadersAre400NamingHeaderAndParameter() throws {
        let cases: [(header: String, value: String?, expected: String)] = [
            ("Encryption", nil, "header Encryption is missing"),
            ("Encryption", "rs=4096", "header Encryption: has no salt"),
            ("Encryption", "salt=***", "header Encryption: parameter salt is not base64url"),
            ("Encryption", "salt=\(Fixture.base64url(Array(Fixture.salt.dropLast())))", "header Encryption: parameter salt is 15 bytes"),
            ("Crypto-Key", nil, "header Crypto-Key is missing"),
            ("Crypto-Key", "p256ecdsa=AAAA", "header Crypto-Key: has no dh"),
            ("Crypto-Key", "dh=a*b", "header Crypto-Key: parameter dh is not base64url"),
            ("Crypto-Key", "dh=\(Fixture.base64url(Array(Fixture.senderKey.dropLast())))", "header Crypto-Key: parameter dh is 64 bytes"),
            ("Crypto-Key", "dh=\(Fixture.base64url([0x02] + Fixture.senderKey.dropFirst()))", "first byte 0x2"),
        ]
        for (name, value, expected) in cases {
            var headers = Fixture.aesgcmHeaders
            headers[name] = value
            let refused = try refusal(headers: headers)
            #expect(refused.status == 400)
            #expect(refused.message.contains(expected), "\(refused)")
        }
    }

    @Test func aBadAES128GCMHeaderIs400() throws {
        let headers = ["Content-Encoding": "aes128gcm"]
        let cases: [(body: [UInt8], expected: String)] = [
            (Array(Fixture.aes128gcmBody().prefix(20)), "too short for the aes128gcm header"),
            (Fixture.aes128gcmBody(recordSize: 17), "record size rs is 17"),
            (Fixture.aes128gcmBody(keyID: Array(Fixture.senderKey.dropLast())), "idlen is 64"),
            (Array(Fixture.aes128gcmBody().prefix(60)), "too short"),
            (Fixture.aes128gcmBody(recordBytes: 16), "a record at least 17"),
            (Fixture.aes128gcmBody(keyID: [0x02] + Fixture.senderKey.dropFirst()), "keyid starts with 0x2"),
        ]
        for (body, expected) in cases {
            let refused = try refusal(headers: headers, body: body)
            #expect(refused.status == 400)
            #expect(refused.message.hasPrefix("body:") && refused.message.contains(expected), "\(refused)")
        }
        #expect(throws: Never.self) { try relay(headers: headers, body: Fixture.aes128gcmBody(recordBytes: 17, recordSize: 18)) }
    }

    /// The limit's derivation (`WebPushRelay.maxBodyBytes`), checked against the payload as written.
    @Test func maxBodyBytesIsTheLargestBodyThatAlwaysFits() throws {
        #expect(RelayPayload.fixedBytes == RelayPayload.bytes(body: [], encryption: try RelayEncryption(aes128gcmBody: Fixture.aes128gcmBody()), extra: nil).count - RelayPayload.encodingMemberBytes)
        let worst = RelayPayload.size(bodyBytes: WebPushRelay.maxBodyBytes, extraBytes: WebPushRelay.maxExtraBytes, encoding: .aes128gcm)
        #expect(worst <= WebPushRelay.maxPayloadBytes)
        #expect(RelayPayload.size(bodyBytes: WebPushRelay.maxBodyBytes + 1, extraBytes: WebPushRelay.maxExtraBytes, encoding: .aes128gcm) > WebPushRelay.maxPayloadBytes)
        #expect(WebPushRelay.maxBodyBytes == 2902 && worst == 4096)
    }

    @Test func theLargestBodyFitsWithTheLongestExtraInBothEncodings() throws {
        let path = "/relay-to/production/\(Fixture.token)/\(String(repeating: "x", count: WebPushRelay.maxExtraBytes))"
        let aes128gcm = Fixture.aes128gcmBody(recordBytes: WebPushRelay.maxBodyBytes - 86)
        let job = try workerJob(try relay(path: path, headers: ["Content-Encoding": "aes128gcm"], body: aes128gcm).body)
        #expect(job.payload.count == WebPushRelay.maxPayloadBytes)
        #expect(string(try payloadObject(job)["p"]).flatMap(ExtendedZ85.decode) == aes128gcm)

        let aesgcm = [UInt8](repeating: 0xEE, count: WebPushRelay.maxBodyBytes)
        let aesgcmJob = try workerJob(try relay(path: path, body: aesgcm).body)
        #expect(aesgcmJob.payload.count == WebPushRelay.maxPayloadBytes - RelayPayload.encodingMemberBytes)
    }

    @Test func oneByteMoreIs413StatingTheLimit() throws {
        for headers in [Fixture.aesgcmHeaders, ["Content-Encoding": "aes128gcm"]] {
            let body = Fixture.aes128gcmBody(recordBytes: WebPushRelay.maxBodyBytes + 1 - 86)
            let refused = try refusal(headers: headers, body: body)
            #expect(refused.status == 413)
            #expect(refused.message.contains("at most 2902 bytes"), "\(refused)")
        }
    }

    @Test func aRefusalComesInTheOrderPathEncodingBody() throws {
        #expect(try refusal(path: "/nope", headers: [:], body: []).status == 404)
        #expect(try refusal(path: "/relay-to/production/abc", headers: [:], body: []).status == 400)
        #expect(try refusal(headers: [:], body: []).status == 415)
        #expect(try refusal(headers: ["Content-Encoding": "aesgcm"], body: []).message.hasPrefix("body:"))
    }
}
