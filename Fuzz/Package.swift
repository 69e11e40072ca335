// swift-tools-version: 6.0
// libFuzzer targets for Pushworker's parsers and decoders. A package of its own so that the main
// package's `swift build` and the release product never build them: run them with `ops/fuzz`.
//
// Each target is one executable that defines `LLVMFuzzerTestOneInput`; libFuzzer (linked in by
// `-sanitize=fuzzer`) drives it, entered through FuzzerEntry. Build (ops/fuzz does this):
//   swift build -c debug --scratch-path /tmp/build-fuzz \
//     -Xswiftc -sanitize=fuzzer,address -Xswiftc -parse-as-library
// The build is a debug build, so the project's modules are compiled with testing enabled and the
// targets can `@testable import` the internal decoders.
import PackageDescription

let fuzzTargets: [(name: String, dependencies: [Target.Dependency])] = [
    ("FuzzJobParser", [.product(name: "PushCore", package: "Pushworker"), .product(name: "APNsCore", package: "Pushworker")]),
    ("FuzzPlatformJobParser", [
        .product(name: "PushCore", package: "Pushworker"), .product(name: "APNsCore", package: "Pushworker"),
        .product(name: "FCMCore", package: "Pushworker"), .product(name: "WebPushCore", package: "Pushworker"),
    ]),
    ("FuzzGatewayInput", [
        .product(name: "GatewayCore", package: "Pushworker"), .product(name: "PushCore", package: "Pushworker"),
        .product(name: "APNsCore", package: "Pushworker"),
    ]),
    ("FuzzJSONParser", [.product(name: "PushCore", package: "Pushworker")]),
    ("FuzzJSONWriterRoundTrip", [.product(name: "PushCore", package: "Pushworker")]),
    ("FuzzDeviceToken", [.product(name: "PushCore", package: "Pushworker")]),
    ("FuzzAMQPFieldTable", [.product(name: "AMQP", package: "Pushworker")]),
    ("FuzzAMQPFrames", [.product(name: "AMQP", package: "Pushworker")]),
    ("FuzzRedisReply", [
        .product(name: "Redis", package: "Pushworker"),
        .product(name: "CHiredis", package: "Pushworker"),
    ]),
    ("FuzzSandboxRequest", [
        .product(name: "Sandbox", package: "Pushworker"),
        .product(name: "PushCore", package: "Pushworker"),
        .product(name: "NIOCore", package: "swift-nio"),
        .product(name: "NIOHPACK", package: "swift-nio-http2"),
        .product(name: "NIOHTTP2", package: "swift-nio-http2"),
        .product(name: "Crypto", package: "swift-crypto"),
    ]),
]

let package = Package(
    name: "PushworkerFuzz",
    platforms: [.macOS(.v15)],
    dependencies: [
        .package(name: "Pushworker", path: ".."),
        // The same packages the main package uses (and so the same resolved versions), for the
        // types the sandbox validator takes and for signing provider tokens.
        .package(url: "https://github.com/apple/swift-nio", from: "2.80.0"),
        .package(url: "https://github.com/apple/swift-nio-http2", from: "1.35.0"),
        .package(url: "https://github.com/apple/swift-crypto", from: "3.12.0"),
    ],
    targets: [
        // Each target's `<Target>_main`, the entry point SwiftPM's Linux link expects (FuzzerEntry.c).
        .target(name: "FuzzerEntry"),
    ] + fuzzTargets.map { target in
        .executableTarget(name: target.name, dependencies: ["FuzzerEntry"] + target.dependencies, path: "Sources/\(target.name)")
    },
    swiftLanguageModes: [.v6]
)
