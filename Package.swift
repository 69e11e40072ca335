// swift-tools-version: 6.0
import PackageDescription

let strict: [SwiftSetting] = [.enableUpcomingFeature("ExistentialAny")]

let package = Package(
    name: "Pushworker",
    platforms: [.macOS(.v15)],
    products: [
        .executable(name: "pushworker", targets: ["pushworker"]),
        // For the libFuzzer targets in Fuzz/ (a separate package): the modules they drive, and
        // hiredis, whose reply reader FuzzRedisReply feeds directly.
        .library(name: "PushCore", targets: ["PushCore"]),
        .library(name: "APNsCore", targets: ["APNsCore"]),
        .library(name: "FCMCore", targets: ["FCMCore"]),
        .library(name: "WebPushCore", targets: ["WebPushCore"]),
        .library(name: "GatewayCore", targets: ["GatewayCore"]),
        .library(name: "AMQP", targets: ["AMQP"]),
        .library(name: "Redis", targets: ["Redis"]),
        .library(name: "Sandbox", targets: ["Sandbox"]),
        .library(name: "CHiredis", targets: ["CHiredis"]),
        // For applications written in Swift: typed jobs, confirmed sends and the job's events.
        .library(name: "PushworkerClient", targets: ["PushworkerClient"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.5.0"),
        .package(url: "https://github.com/apple/swift-log", from: "1.6.0"),
        .package(url: "https://github.com/apple/swift-nio", from: "2.80.0"),
        .package(url: "https://github.com/apple/swift-nio-ssl", from: "2.30.0"),
        .package(url: "https://github.com/apple/swift-nio-http2", from: "1.35.0"),
        .package(url: "https://github.com/apple/swift-certificates", from: "1.10.0"),
        .package(url: "https://github.com/apple/swift-crypto", from: "3.12.0"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle", from: "2.6.0"),
        .package(url: "https://github.com/HdrHistogram/hdrhistogram-swift", from: "0.1.0"),
        .package(url: "https://github.com/jpsim/Yams", from: "6.2.2"),
        .package(url: "https://github.com/hummingbird-project/hummingbird", from: "2.28.1"),
        .package(url: "https://github.com/apple/swift-http-types", from: "1.8.0"),
        .package(url: "https://github.com/apple/swift-metrics", from: "2.13.0"),
        .package(url: "https://github.com/swift-server/swift-prometheus", from: "2.4.1"),
        .package(url: "https://github.com/swift-server/async-http-client", from: "1.37.0"),
    ],
    targets: [
        // C libraries: the only places that see raw pointers are the thin wrappers that import these.
        .systemLibrary(name: "CRabbitMQ", pkgConfig: "librabbitmq", providers: [.apt(["librabbitmq-dev"])]),
        // hiredis.pc adds -D_FILE_OFFSET_BITS=64, which SwiftPM rejects; the headers are on the default path.
        .systemLibrary(name: "CHiredis", providers: [.apt(["libhiredis-dev"])]),
        .systemLibrary(name: "CNghttp2", pkgConfig: "libnghttp2", providers: [.apt(["libnghttp2-dev"])]),
        .systemLibrary(name: "COpenSSL", pkgConfig: "openssl", providers: [.apt(["libssl-dev"])]),
        // glibc pieces the Glibc module does not export (eventfd, malloc tuning): no library of its own.
        .systemLibrary(name: "CSystemShim"),

        .target(name: "PushCore", swiftSettings: strict),
        // APNs' vocabulary (push types, reasons, the job's APNs fields and their rules): pure Swift,
        // apart from PushCore so that the shared job model names no platform.
        .target(name: "APNsCore", dependencies: ["PushCore"], swiftSettings: strict),
        // Web Push's vocabulary, pure Swift: a browser's subscription and its compact form.
        .target(name: "WebPushCore", dependencies: ["PushCore"], swiftSettings: strict),
        // FCM HTTP v1's vocabulary, pure Swift: a job's FCM fields and their rules, the message body,
        // and what each answer means.
        .target(name: "FCMCore", dependencies: ["PushCore"], swiftSettings: strict),
        // Other systems' input turned into job JSON (toot-relay's Web Push relay, pushd's UDP packets): pure Swift.
        .target(name: "GatewayCore", dependencies: ["PushCore", "APNsCore"], swiftSettings: strict),
        // The platforms by name, with their job rules: the one list the worker, gateway and commands read.
        .target(name: "PlatformCatalog", dependencies: ["PushCore", "APNsCore", "FCMCore", "WebPushCore"], swiftSettings: strict),
        // The thread that owns a C connection, and the eventfd that wakes it: used by AMQP and HTTP2.
        .target(name: "OwnerThread", dependencies: ["CSystemShim"], swiftSettings: strict),
        .target(name: "AMQP", dependencies: [
            "CRabbitMQ", "OwnerThread", "PushCore",
            .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
            .product(name: "Logging", package: "swift-log"),
        ], swiftSettings: strict),
        .target(name: "Redis", dependencies: [
            "CHiredis", "PushCore",
            .product(name: "Logging", package: "swift-log"),
        ], swiftSettings: strict),
        .target(name: "HTTP2", dependencies: [
            "CNghttp2", "COpenSSL", "OwnerThread", "PushCore",
            .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
            .product(name: "Logging", package: "swift-log"),
        ], swiftSettings: strict),
        // What every platform's client offers the worker (`PushTransport`), and the answer and
        // request ids they share: the worker's rounds, settlement and breaker name no platform.
        .target(name: "PushTransport", dependencies: ["PushCore", .product(name: "Logging", package: "swift-log")], swiftSettings: strict),
        // What an HTTP/2 client's failures and pool mean to a transport: the glue of the platforms over HTTP/2.
        .target(name: "HTTP2Transport", dependencies: ["HTTP2", "PushCore", "PushTransport"], swiftSettings: strict),
        .target(name: "APNs", dependencies: [
            "HTTP2", "HTTP2Transport", "APNsCore", "PushCore", "PushTransport", "COpenSSL",
            .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
            .product(name: "Logging", package: "swift-log"),
        ], swiftSettings: strict),
        // Web Push (RFC 8291 message encryption, RFC 8292 VAPID) over OpenSSL 3: one wrapper file
        // holds the C calls, the protocol is pure Swift.
        .target(name: "WebPush", dependencies: [
            "COpenSSL", "PushCore", "WebPushCore", "PushTransport", "HTTP2", "HTTP2Transport",
            .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
            // Push services that offer only HTTP/1.1, on NIO's shared event loops.
            .product(name: "AsyncHTTPClient", package: "async-http-client"),
            .product(name: "NIOCore", package: "swift-nio"),
            .product(name: "NIOPosix", package: "swift-nio"),
            .product(name: "NIOHTTP1", package: "swift-nio"),
            .product(name: "NIOSSL", package: "swift-nio-ssl"),
            .product(name: "Logging", package: "swift-log"),
        ], swiftSettings: strict),
        // FCM HTTP v1: the service account's OAuth token (RS256 over OpenSSL 3 in one wrapper file)
        // and the client over `HTTP2` (a `PushTransport`).
        .target(name: "FCM", dependencies: [
            "FCMCore", "HTTP2", "HTTP2Transport", "PushCore", "PushTransport", "COpenSSL",
            .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
            .product(name: "Logging", package: "swift-log"),
        ], swiftSettings: strict),
        // Live Activity broadcast channels as Pushworker remembers them (label, end, storage policy)
        // in Redis, beside the groups; APNs keeps which channels exist.
        .target(name: "BroadcastChannels", dependencies: ["PushCore", "Redis"], swiftSettings: strict),
        // APNs provider tokens shared by a fleet through Redis: the `CredentialStore` the
        // executable gives the worker (one token per team and key, however many workers).
        .target(name: "APNsTokenSharing", dependencies: [
            "APNs", "PushCore", "PushTransport", "Redis",
            .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
            .product(name: "Logging", package: "swift-log"),
            .product(name: "Crypto", package: "swift-crypto"),
        ], swiftSettings: strict),
        .target(name: "Sandbox", dependencies: [
            "APNsCore", "PushCore",
            .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
            .product(name: "NIOCore", package: "swift-nio"),
            .product(name: "NIOPosix", package: "swift-nio"),
            .product(name: "NIOHTTP1", package: "swift-nio"),
            .product(name: "NIOSSL", package: "swift-nio-ssl"),
            .product(name: "NIOHTTP2", package: "swift-nio-http2"),
            .product(name: "X509", package: "swift-certificates"),
            .product(name: "Crypto", package: "swift-crypto"),
            .product(name: "_CryptoExtras", package: "swift-crypto"),
            .product(name: "Logging", package: "swift-log"),
        ], swiftSettings: strict),
        .target(name: "Worker", dependencies: [
            "AMQP", "Redis", "PushCore", "PushTransport", "BroadcastChannels", "CSystemShim", "OwnerThread",
            .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
            .product(name: "Logging", package: "swift-log"),
            .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            .product(name: "Histogram", package: "hdrhistogram-swift"),
            .product(name: "Crypto", package: "swift-crypto"),
            .product(name: "CoreMetrics", package: "swift-metrics"),
        ], swiftSettings: strict),
        // The --status-port endpoint (HTTP/1.1 over swift-nio): apart from Worker, which uses no NIO.
        .target(name: "StatusEndpoint", dependencies: [
            "Worker", "OwnerThread",
            .product(name: "Logging", package: "swift-log"),
            .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            .product(name: "NIOCore", package: "swift-nio"),
            .product(name: "NIOPosix", package: "swift-nio"),
            .product(name: "NIOHTTP1", package: "swift-nio"),
            .product(name: "CoreMetrics", package: "swift-metrics"),
            .product(name: "Prometheus", package: "swift-prometheus"),
        ], swiftSettings: strict),
        // The YAML configuration file (many apps): its model, reader and checks, turned into a
        // WorkerConfiguration. Yams' nodes carry line numbers, so every error names its line.
        .target(name: "WorkerConfigurationFile", dependencies: [
            "Worker", "APNs", "APNsCore", "APNsTokenSharing", "WebPush", "FCM", "HTTP2", "AMQP", "Redis", "PushCore", "PushTransport", "PlatformCatalog", "GatewayCore",
            .product(name: "Yams", package: "Yams"),
            .product(name: "Logging", package: "swift-log"),
        ], swiftSettings: strict),
        // `pushworker gateway`: jobs and groups over HTTP (Hummingbird 2), checked by the worker's own
        // parser and published with confirms.
        .target(name: "Gateway", dependencies: [
            "AMQP", "Redis", "PushCore", "APNsCore", "FCMCore", "WebPushCore", "GatewayCore", "PushworkerClient", "PlatformCatalog",
            "HTTP2",
            .product(name: "Hummingbird", package: "hummingbird"),
            .product(name: "HTTPTypes", package: "swift-http-types"),
            .product(name: "Crypto", package: "swift-crypto"),
            .product(name: "Logging", package: "swift-log"),
            .product(name: "NIOCore", package: "swift-nio"),
            .product(name: "NIOPosix", package: "swift-nio"),
            .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
            .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            .product(name: "UnixSignals", package: "swift-service-lifecycle"),
        ], swiftSettings: strict),
        // What an application links to publish jobs and read events: never the worker itself.
        .target(name: "PushworkerClient", dependencies: [
            "AMQP", "PushCore",
            .product(name: "Logging", package: "swift-log"),
        ], swiftSettings: strict),
        // The operators' commands (`pushworker queues`, `dead`, `groups import`): what they do, apart
        // from the command line so that tests run it against the real broker and Redis.
        .target(name: "Operations", dependencies: [
            "AMQP", "Redis", "PushCore", "APNsCore", "FCMCore", "WebPushCore", "PlatformCatalog",
        ], swiftSettings: strict),
        // jemalloc's settings (malloc_conf.c), linked into the executable.
        .target(name: "MallocTuning"),
        .executableTarget(name: "pushworker", dependencies: [
            "Worker", "WorkerConfigurationFile", "StatusEndpoint", "Gateway", "GatewayCore", "PlatformCatalog", "Sandbox", "APNs", "APNsCore", "APNsTokenSharing", "PushTransport", "BroadcastChannels", "WebPush", "WebPushCore", "FCM", "FCMCore", "Redis", "AMQP", "PushCore", "PushworkerClient", "MallocTuning", "Operations",
            .product(name: "ArgumentParser", package: "swift-argument-parser"),
            .product(name: "Logging", package: "swift-log"),
            .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            .product(name: "UnixSignals", package: "swift-service-lifecycle"),
            .product(name: "NIOCore", package: "swift-nio"),
            .product(name: "NIOPosix", package: "swift-nio"),
            .product(name: "NIOHTTP1", package: "swift-nio"),
        ], swiftSettings: strict, linkerSettings: [
            // jemalloc instead of glibc's malloc: a one-token job costs the worker ~20% less CPU,
            // a 100-token job ~25% (glibc's arenas paid for buffers made on the AMQP thread and
            // freed on the HTTP/2 thread). Release builds only: the sanitizers bring their own.
            .linkedLibrary("jemalloc", .when(platforms: [.linux], configuration: .release)),
        ]),

        .testTarget(name: "PushCoreTests", dependencies: ["PushCore", "APNsCore", "WebPushCore", "PlatformCatalog"], swiftSettings: strict),
        .testTarget(name: "PushTransportTests", dependencies: ["PushTransport", "HTTP2", "HTTP2Transport"], swiftSettings: strict),
        .testTarget(name: "WebPushCoreTests", dependencies: ["WebPushCore", "PushCore"], swiftSettings: strict),
        .testTarget(name: "FCMCoreTests", dependencies: ["FCMCore", "PushCore"], swiftSettings: strict),
        .testTarget(name: "GatewayCoreTests", dependencies: ["GatewayCore", "PushCore", "APNsCore"], swiftSettings: strict),
        .testTarget(name: "APNsCoreTests", dependencies: ["APNsCore", "PushCore"], swiftSettings: strict),
        .testTarget(name: "OwnerThreadTests", dependencies: ["OwnerThread", .product(name: "NIOConcurrencyHelpers", package: "swift-nio")], swiftSettings: strict),
        .testTarget(name: "AMQPTests", dependencies: ["AMQP", "PushCore", .product(name: "Logging", package: "swift-log"), .product(name: "NIOConcurrencyHelpers", package: "swift-nio")], swiftSettings: strict),
        .testTarget(name: "APNsTests", dependencies: ["APNs", "APNsCore", "PushCore", "PushTransport", "HTTP2", "HTTP2Transport", "COpenSSL", .product(name: "Logging", package: "swift-log"), .product(name: "NIOConcurrencyHelpers", package: "swift-nio")], swiftSettings: strict),
        .testTarget(name: "HTTP2Tests", dependencies: ["HTTP2", "PushCore", .product(name: "Logging", package: "swift-log"), .product(name: "NIOConcurrencyHelpers", package: "swift-nio")],
                    resources: [.copy("Resources")], swiftSettings: strict),
        .testTarget(name: "SandboxTests", dependencies: [
            "Sandbox", "APNsCore", "PushCore",
            .product(name: "Logging", package: "swift-log"),
            .product(name: "Crypto", package: "swift-crypto"),
        ], swiftSettings: strict),
        // The pinned Python peers (ops/python-peers.sh) for the tests that check against code not ours.
        .target(name: "PythonPeer", path: "Tests/PythonPeer", swiftSettings: strict),
        .testTarget(name: "WebPushTests", dependencies: [
            "PythonPeer",
            "WebPush", "WebPushCore", "Sandbox", "PushCore", "PushTransport", "HTTP2",
            .product(name: "Logging", package: "swift-log"),
            .product(name: "Crypto", package: "swift-crypto"),
        ], swiftSettings: strict),
        .testTarget(name: "FCMTests", dependencies: [
            "PythonPeer", "FCM", "FCMCore", "PushCore", "PushTransport", "HTTP2", "Sandbox",
            .product(name: "Logging", package: "swift-log"),
            .product(name: "Crypto", package: "swift-crypto"),
            .product(name: "_CryptoExtras", package: "swift-crypto"),
        ], swiftSettings: strict),
        .testTarget(name: "RedisTests", dependencies: ["Redis"], swiftSettings: strict),
        // Unit tests, and the gateway run over HTTP against the real RabbitMQ (in this process, and
        // the `pushworker` executable for SIGHUP).
        .testTarget(name: "GatewayTests", dependencies: [
            "Gateway", "HTTP2", "AMQP", "Redis", "WorkerConfigurationFile",
            .product(name: "Logging", package: "swift-log"),
            .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
            .product(name: "NIOCore", package: "swift-nio"),
            .product(name: "NIOPosix", package: "swift-nio"),
            .product(name: "NIOHTTP1", package: "swift-nio"),
        ], swiftSettings: strict),
        .testTarget(name: "StatusEndpointTests", dependencies: [
            "StatusEndpoint", "Worker", "OwnerThread",
            .product(name: "Logging", package: "swift-log"),
            .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
        ], swiftSettings: strict),
        .testTarget(name: "WorkerConfigurationFileTests", dependencies: [
            "WorkerConfigurationFile", "Worker", "APNs", "WebPush", "FCM", "HTTP2", "PushCore", "PushTransport", "Redis", "AMQP",
            .product(name: "X509", package: "swift-certificates"),
            .product(name: "Crypto", package: "swift-crypto"),
        ], swiftSettings: strict),
        .testTarget(name: "APNsTokenSharingTests", dependencies: ["APNsTokenSharing"], swiftSettings: strict),
        .testTarget(name: "BroadcastChannelsTests", dependencies: ["BroadcastChannels", "Redis", "PushCore", .product(name: "Logging", package: "swift-log")], swiftSettings: strict),
        .testTarget(name: "WorkerTests", dependencies: [
            "Worker", "AMQP", "APNs", "APNsCore", "PushCore", "PushTransport", "Redis",
            .product(name: "Logging", package: "swift-log"), .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
        ], swiftSettings: strict),
        // The client's JSON is read back with the worker's own parser, and its declarations compared with the worker's.
        .testTarget(name: "PushworkerClientTests", dependencies: [
            "PushworkerClient", "Worker", "AMQP", "PushCore", "APNsCore", "FCMCore", "WebPushCore",
            .product(name: "Logging", package: "swift-log"),
        ], swiftSettings: strict),
        // The operators' commands against the real RabbitMQ and Redis; dead-letter copies made by the worker's own code.
        .testTarget(name: "OperationsTests", dependencies: [
            "Operations", "Worker", "AMQP", "Redis", "PushCore",
            .product(name: "Logging", package: "swift-log"),
        ], swiftSettings: strict),
        .testTarget(name: "IntegrationTests", dependencies: [
            "Worker", "WorkerConfigurationFile", "Sandbox", "AMQP", "Redis", "APNs", "APNsCore", "APNsTokenSharing", "BroadcastChannels", "WebPush", "FCM", "PushCore", "PushTransport", "HTTP2",
            "StatusEndpoint", "PlatformCatalog",
            .product(name: "Logging", package: "swift-log"),
            .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
        ], swiftSettings: strict),
    ],
    swiftLanguageModes: [.v6]
)
