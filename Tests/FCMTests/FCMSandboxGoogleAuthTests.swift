import FCM
import Foundation
import HTTP2
import PythonPeer
import Sandbox
import Testing

/// google-auth (pinned by ops/python-peers.sh), Google's own client library, mints an access token
/// against the sandbox's token endpoint from the service-account file the sandbox wrote; the token
/// then sends a message. A missing venv fails the test, it never skips it.
@Suite struct FCMSandboxGoogleAuthTests {
    /// argv: service-account file, CA file. Prints the access token.
    static let mintToken = #"""
    import sys
    import requests
    from importlib.metadata import version
    from google.oauth2 import service_account
    from google.auth.transport.requests import Request
    if version("google-auth") != "2.62.2":
        sys.exit("google-auth %s, not the pinned 2.62.2: run ops/python-peers.sh" % version("google-auth"))
    credentials = service_account.Credentials.from_service_account_file(
        sys.argv[1], scopes=["https://www.googleapis.com/auth/firebase.messaging"])
    session = requests.Session()
    # Not the environment's REQUESTS_CA_BUNDLE (it wins over session.verify) nor its proxies.
    session.trust_env = False
    session.verify = sys.argv[2]
    credentials.refresh(Request(session=session))
    print(credentials.token)
    """#

    @Test("google-auth gets a token from the sandbox, and the token sends")
    func googleAuthMintsToken() async throws {
        try await withFCMSandbox { harness in
            let result = try await PythonPeer.run(Self.mintToken, [harness.serviceAccountFile, harness.caFile])
            #expect(result.status == 0, "\(result.stdout) \(result.stderr)")
            let token = result.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
            #expect(token.hasPrefix("ya29.sandbox."), "\(token)")
            #expect(harness.sandbox.accessTokensIssued == 1)

            let raw = harness.makeRawClient()
            let response = try await raw.send(HTTP2Request(method: "POST", path: harness.sendPath, headers: [
                HTTP2Header(name: "authorization", value: "Bearer \(token)"), HTTP2Header(name: "content-type", value: "application/json"),
            ], body: Array(#"{"message":{"token":"device-0000000000000001","notification":{"title":"Hi"}}}"#.utf8)))
            await raw.shutdown()
            #expect(response.status == 200, "\(String(decoding: response.body, as: UTF8.self))")
            #expect(String(decoding: response.body, as: UTF8.self).hasPrefix(#"{"name":"projects/pushworker-sandbox/messages/"#))
        }
    }

    @Test("google-auth is refused once the service account is revoked, with Google's invalid_grant")
    func googleAuthRefused() async throws {
        try await withFCMSandbox { harness in
            harness.sandbox.setServiceAccountRevoked(true)
            let result = try await PythonPeer.run(Self.mintToken, [harness.serviceAccountFile, harness.caFile])
            #expect(result.status != 0)
            #expect(result.stderr.contains("invalid_grant"), "\(result.stderr)")
            #expect(harness.sandbox.accessTokensIssued == 0)
        }
    }
}
