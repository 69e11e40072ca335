import Foundation
@testable import HTTP2
import Testing

/// What the worker checks about a client certificate before it connects (issue "guards", item 4):
/// certificates made by the openssl CLI, read by our OpenSSL wrapper.
@Suite struct CertificateInspectionTests {
    @Test func anAPNsCertificateNamesItsBundleIDTopicsAndExpiry() throws {
        let certificates = try APNsStyleCertificates.get()
        let summary = try TLSClientIdentity.pem(certificateFile: certificates.pushCertificate, privateKeyFile: certificates.pushKey).inspect()
        #expect(summary.bundleID == APNsStyleCertificates.bundleID)
        #expect(summary.commonName == "Apple Push Services: \(APNsStyleCertificates.bundleID)")
        #expect(summary.topics == APNsStyleCertificates.topics)
        #expect(summary.validUntil.hasSuffix(" UTC"))
    }

    @Test func aCertificateWithoutTheTopicsExtensionHasItsBundleIDAsTopicOrNone() throws {
        let pki = try TestPKI.get()
        let summary = try TLSClientIdentity.pkcs12(file: pki.clientPKCS12, password: TestPKI.clientKeyPassword).inspect()
        #expect(summary.bundleID == nil)
        #expect(summary.topics.isEmpty)
        #expect(summary.commonName == TestPKI.clientCommonName)
    }

    @Test func anExpiredCertificateIsRefusedNamingTheFileAndTheDate() throws {
        let certificates = try APNsStyleCertificates.get()
        let error = #expect(throws: HTTP2Error.self) {
            try TLSClientIdentity.pem(certificateFile: certificates.expiredCertificate, privateKeyFile: certificates.key).inspect()
        }
        #expect(error?.message.contains(certificates.expiredCertificate) == true)
        #expect(error?.message.contains("expired on 2021-01-01 00:00:00 UTC") == true, "\(error?.message ?? "")")
    }

    @Test func aCertificateNotValidYetIsRefused() throws {
        let certificates = try APNsStyleCertificates.get()
        let error = #expect(throws: HTTP2Error.self) {
            try TLSClientIdentity.pem(certificateFile: certificates.futureCertificate, privateKeyFile: certificates.key).inspect()
        }
        #expect(error?.message.contains("not valid before 2099-01-01") == true, "\(error?.message ?? "")")
    }

    @Test func aMalformedCertificateOrKeyIsRefusedNamingTheFile() throws {
        let certificates = try APNsStyleCertificates.get()
        let garbage = certificates.pki.directory + "/garbage.pem"
        try "-----BEGIN CERTIFICATE-----\nnot base64 at all\n-----END CERTIFICATE-----\n".write(toFile: garbage, atomically: true, encoding: .utf8)
        let badCertificate = #expect(throws: HTTP2Error.self) {
            try TLSClientIdentity.pem(certificateFile: garbage, privateKeyFile: certificates.key).inspect()
        }
        #expect(badCertificate?.message.contains(garbage) == true, "\(badCertificate?.message ?? "")")
        let badKey = #expect(throws: HTTP2Error.self) {
            try TLSClientIdentity.pem(certificateFile: certificates.pushCertificate, privateKeyFile: garbage).inspect()
        }
        #expect(badKey?.message.contains(garbage) == true, "\(badKey?.message ?? "")")
    }

    @Test func aKeyThatDoesNotMatchIsRefusedNamingTheCertificate() throws {
        let certificates = try APNsStyleCertificates.get()
        let error = #expect(throws: HTTP2Error.self) {
            try TLSClientIdentity.pem(certificateFile: certificates.pushCertificate, privateKeyFile: certificates.pki.serverKey).inspect()
        }
        #expect(error?.message.contains(certificates.pushCertificate) == true, "\(error?.message ?? "")")
        #expect(error?.message.contains(certificates.pki.serverKey) == true)
        #expect(error?.message.contains("mismatch") == true)
    }

    @Test func topicsExtensionParsing() {
        #expect(CertificateTopics.parse(APNsStyleCertificates.topicsDER(["a.b", "a.b.voip"])) == ["a.b", "a.b.voip"])
        #expect(CertificateTopics.parse(APNsStyleCertificates.topicsDER([])) == [])
        #expect(CertificateTopics.parse([0x30, 0x05, 0x0c, 0x03, 0x61]) == nil, "a length past the end")
        #expect(CertificateTopics.parse([0x04, 0x00]) == nil, "not a SEQUENCE")
        #expect(CertificateTopics.parse([]) == nil)
        #expect(CertificateTopics.parse([0x30, 0x84, 0xff, 0xff, 0xff, 0xff]) == nil, "a huge length")
    }
}
