// swift-tools-version:6.1
import PackageDescription

let package = Package(
    name: "pushq",
    platforms: [.macOS(.v15)],
    products: [
        .executable(name: "pushq", targets: ["pushq"]),
        .executable(name: "pushq-mock", targets: ["pushq-mock"]),
        // The mock APNs + FCM server, for users' own test suites (docs/testing.md).
        .library(name: "MockPush", targets: ["MockPush"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.5.0"),
        // 1.16: LogHandler.log(event:), and InMemoryLogging for the tests.
        .package(url: "https://github.com/apple/swift-log", from: "1.16.0"),
        .package(url: "https://github.com/apple/swift-nio", from: "2.80.0"),
        .package(url: "https://github.com/apple/swift-nio-http2", from: "1.36.0"),
        .package(url: "https://github.com/apple/swift-nio-ssl", from: "2.30.0"),
        // Tests only: property-based tests (no dependencies of its own).
        .package(url: "https://github.com/x-sheep/swift-property-based", from: "2.0.1"),
        // Metrics: the worker records through swift-metrics; the pushq executable serves them with
        // Hummingbird (HTTP/1; traits off: no swift-configuration) in Prometheus' format. `pushq serve` uses it too, with
        // HummingbirdTLS (swift-nio-ssl, a dependency already) for its own TLS.
        .package(url: "https://github.com/apple/swift-metrics", from: "2.13.0"),
        .package(url: "https://github.com/swift-server/swift-prometheus", from: "2.4.1"),
        .package(url: "https://github.com/hummingbird-project/hummingbird", from: "2.28.1", traits: []),
        // serve's request-head timeout reads Hummingbird's HTTP parts (NIOHTTPTypes, a dependency of Hummingbird's already).
        .package(url: "https://github.com/apple/swift-nio-extras.git", from: "1.34.1"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle", from: "2.13.0"),
        // Tests only: docker-compose.yml and the Prometheus files are read as YAML.
        .package(url: "https://github.com/jpsim/Yams", from: "6.2.2"),
    ],
    targets: [
        // C libraries: module map + shim.h only.
        .systemLibrary(name: "CLibPQ", pkgConfig: "libpq", providers: [.apt(["libpq-dev"])]),
        .systemLibrary(name: "CCurl", pkgConfig: "libcurl", providers: [.apt(["libcurl4-openssl-dev"])]),
        .systemLibrary(name: "COpenSSL", pkgConfig: "openssl", providers: [.apt(["libssl-dev"])]),

        // posix_spawn + waitpid child processes (fixtures, tests, benchmarks): Foundation's Process can miss exits on Linux.
        // Also the test processes' own fixture directories (ProcessTemporaryDirectory).
        .target(name: "ChildProcess"),
        // Pure: models, limits, APNs reasons, outcome classification, retry policy. No I/O.
        .target(name: "PushCore"),
        // The libpq driver: connection, statements, prepared statements, notify, results, parameters,
        // errors, the thread its blocking calls run on. Knows nothing of pushq's tables nor of PushCore.
        .target(
            name: "PGClient",
            dependencies: ["CLibPQ", .product(name: "Logging", package: "swift-log")]
        ),
        // pushq's SQL on PGClient: the queue (claim, write-back, due, leases), channels, what serve
        // reads and writes, status, and the migrations.
        .target(
            name: "PushStore",
            dependencies: ["PGClient", "CLibPQ", "PushCore", .product(name: "Logging", package: "swift-log")],
            resources: [.embedInCode("Migrations/SQL")]
        ),
        // The HTTP/2 senders (libcurl): provider-neutral machinery in Curl/, each provider's own
        // requests, authentication and answers in APNs/ and FCM/ (see docs/architecture.md).
        .target(
            name: "PushTransport",
            dependencies: ["CCurl", "COpenSSL", "PushCore", .product(name: "Logging", package: "swift-log")]
        ),
        // claim -> send -> record pipeline.
        .target(
            name: "PushWorker",
            dependencies: ["PushStore", "PGClient", "PushTransport", "PushCore", .product(name: "Logging", package: "swift-log"),
                           .product(name: "CoreMetrics", package: "swift-metrics")]
        ),
        // SwiftNIO HTTP/2 TLS mock of APNs and FCM (tests, make run, benchmarks, users' tests). Never
        // linked into pushq, and independent of it: it carries Apple's and Google's rules itself, so a
        // wrong limit in PushCore shows up as a refused request instead of agreeing with itself.
        .target(
            name: "MockPush",
            dependencies: [
                "COpenSSL",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP2", package: "swift-nio-http2"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        // `pushq serve`: the HTTP API and the dashboard (Hummingbird), over TLS when given a
        // certificate (HummingbirdTLS, on swift-nio-ssl). Reads and writes through PushStore only.
        .target(
            name: "PushServe",
            dependencies: [
                "PushStore", "PGClient", "PushCore", "COpenSSL",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdCore", package: "hummingbird"),
                .product(name: "HummingbirdTLS", package: "hummingbird"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "NIOHTTPTypes", package: "swift-nio-extras"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            resources: [.embedInCode("API/openapi.json")]
        ),
        .executableTarget(
            name: "pushq",
            dependencies: [
                "PushWorker", "PushStore", "PGClient", "PushTransport", "PushCore", "PushServe",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "CoreMetrics", package: "swift-metrics"),
                .product(name: "Prometheus", package: "swift-prometheus"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            // Release builds on Linux: lld with packed relative relocations (DT_RELR, glibc 2.36+),
            // and no dynamic symbol table of pushq's own. The position-independent executable
            // otherwise carries 2.7 MB of relocations and 2.8 MB of exported symbols that the loader
            // reads at every start and that stay resident: ~4 MB of peak RSS (docs/performance.md,
            // "Linked differently"). The functions a worker runs (scripts/function-order.txt, written by
            // scripts/order-functions) are placed first, next to each other: ~6 MB less resident
            // code ("Functions in the order a worker runs them"); a name no longer found is skipped.
            // Not part of the MockPush product.
            linkerSettings: [.unsafeFlags(["-use-ld=lld", "-Xlinker", "-z", "-Xlinker", "pack-relative-relocs",
                                           "-Xlinker", "--no-export-dynamic",
                                           "-Xlinker", "--symbol-ordering-file=\(Context.packageDirectory)/scripts/function-order.txt",
                                           "-Xlinker", "--no-warn-symbol-ordering"],
                                          .when(platforms: [.linux], configuration: .release))]
        ),
        .executableTarget(
            name: "pushq-mock",
            dependencies: [
                "MockPush",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),

        // Benchmark: notifications/s of PushSender alone (scripts/bench-client).
        .executableTarget(
            name: "sender-bench",
            dependencies: ["PushTransport", "PushCore", .product(name: "Logging", package: "swift-log")],
            path: "bench/sender-bench"
        ),

        // Shared by the test targets: a fresh database per test on the cluster of PUSHQ_DATABASE_URL.
        // Also this repository's own fixtures (scripts/gen-test-certs, fixed key ids) for the mock.
        .target(name: "PushTestSupport", dependencies: ["PushStore", "PGClient", "PushCore", "ChildProcess", "MockPush", .product(name: "Logging", package: "swift-log")]),

        // Benchmark: the SQL ceiling (claim + complete without HTTP) and idle-latency inserts (scripts/bench).
        .executableTarget(
            name: "queue-bench",
            dependencies: ["PushStore", "PGClient", "PushCore", .product(name: "Logging", package: "swift-log")],
            path: "bench/queue-bench"
        ),

        .testTarget(name: "PushCoreTests", dependencies: ["PushCore", .product(name: "PropertyBased", package: "swift-property-based")]),
        .testTarget(name: "PushStoreTests", dependencies: ["PushStore", "PGClient", "PushCore", "ChildProcess", "PushTestSupport",
                                                    .product(name: "InMemoryLogging", package: "swift-log"),
                                                    .product(name: "PropertyBased", package: "swift-property-based"),
                                                    .product(name: "Yams", package: "Yams")],
                    exclude: ["Fixtures"]),
        .testTarget(name: "PushTransportTests", dependencies: ["PushTransport", "MockPush", "PushCore", "ChildProcess", "PushTestSupport", .product(name: "PropertyBased", package: "swift-property-based")]),
        .testTarget(name: "PushWorkerTests", dependencies: ["PushWorker", "PushStore", "PGClient", "MockPush", "PushTransport", "PushCore", "ChildProcess", "PushTestSupport",
                                                     .product(name: "InMemoryLogging", package: "swift-log"),
                                                     .product(name: "PropertyBased", package: "swift-property-based")]),
        // The mock's own tests: its public API over real TLS + HTTP/2, with fixtures it generates itself.
        .testTarget(name: "MockPushTests", dependencies: ["MockPush", "ChildProcess", "COpenSSL",
                                                   .product(name: "Logging", package: "swift-log"),
                                                   .product(name: "NIOHPACK", package: "swift-nio-http2")]),
        // pushq serve against a real PostgreSQL, over real HTTP (and TLS) on 127.0.0.1.
        .testTarget(name: "PushServeTests", dependencies: ["PushServe", "PushStore", "PGClient", "PushCore", "ChildProcess", "PushTestSupport", "MockPush",
                                                     .product(name: "Hummingbird", package: "hummingbird"),
                                                     .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                                                     .product(name: "Logging", package: "swift-log")]),
        // The pushq executable's own code (settings, --help, the log handler), imported with @testable.
        .testTarget(name: "PushqTests", dependencies: ["pushq", "PushWorker", "PushTransport", "PushCore",
                                                   .product(name: "Logging", package: "swift-log")]),
    ],
    swiftLanguageModes: [.v6]
)
