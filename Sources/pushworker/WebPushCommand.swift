import ArgumentParser
import WebPush

/// `pushworker webpush keys`: a new VAPID key pair, in the form web-push libraries and browsers use.
struct WebPushCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "webpush",
        abstract: "Web Push tools.",
        subcommands: [Keys.self])

    struct Keys: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Print a new VAPID key pair (P-256) in base64url.",
            discussion: "The public key is the 65-byte uncompressed point: give it to the web page as the applicationServerKey browsers subscribe with. The private key is the 32-byte scalar: keep it secret, in the app's vapid.private_key (from a file or an environment variable). Subscriptions made with one public key only accept messages signed with its private key: keep the pair for as long as those subscriptions live.")

        @Flag(help: "Print the pair as two lines of shell variable assignments (VAPID_PUBLIC_KEY=…, VAPID_PRIVATE_KEY=…).")
        var shell = false

        func run() throws {
            let pair = try VAPIDKey.generateBase64URLPair()
            if shell {
                print("VAPID_PUBLIC_KEY=\(pair.publicKey)")
                print("VAPID_PRIVATE_KEY=\(pair.privateKey)")
            } else {
                print("public key:  \(pair.publicKey)")
                print("private key: \(pair.privateKey)")
            }
        }
    }
}
