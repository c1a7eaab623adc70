// swift-tools-version: 6.1
import Foundation
import PackageDescription

// FFmpeg: with FILMSTRIP_STATIC_FFMPEG=1 (the Makefile sets it, after Scripts/build-ffmpeg.sh made the build), a static
// FFmpeg with only what Filmstrip uses, found by pkg-config as `filmstrip-ffmpeg`, whose link line names every
// library and dependency; otherwise the system's shared libraries, linked by name.
let staticFFmpeg = ProcessInfo.processInfo.environment["FILMSTRIP_STATIC_FFMPEG"] == "1"
let ffmpegLibraries: [LinkerSetting] =
    staticFFmpeg
    ? [] : ["avfilter", "avformat", "avcodec", "swscale", "swresample", "avutil"].map { .linkedLibrary($0) }

let package = Package(
    name: "Filmstrip",
    platforms: [.macOS(.v15), .iOS(.v18), .tvOS(.v18)],
    products: [
        .library(name: "Filmstrip", targets: ["Filmstrip"]),
        .library(name: "FilmstripFormats", targets: ["FilmstripFormats"]),
        .library(name: "FilmstripImaging", targets: ["FilmstripImaging"]),
        .library(name: "FilmstripLoading", targets: ["FilmstripLoading"]),
        .library(name: "FilmstripStreaming", targets: ["FilmstripStreaming"]),
        .library(name: "FilmstripThumbnails", targets: ["FilmstripThumbnails"]),
        .library(name: "FilmstripMedia", targets: ["FilmstripMedia"]),
        .library(name: "FilmstripPreviews", targets: ["FilmstripPreviews"]),
        .library(name: "FilmstripPlayer", targets: ["FilmstripPlayer"]),
        .library(name: "FilmstripServer", targets: ["FilmstripServer"]),
        .library(name: "FilmstripCatalog", targets: ["FilmstripCatalog"]),
        .library(name: "FilmstripTesting", targets: ["FilmstripTesting"]),
        .library(name: "FilmstripWindow", targets: ["FilmstripWindow"]),
        .executable(name: "filmstrip", targets: ["FilmstripCLI"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-log.git", from: "1.16.2"),
        .package(url: "https://github.com/apple/swift-argument-parser.git", from: "1.8.2"),
        .package(url: "https://github.com/apple/swift-crypto.git", from: "3.12.3"),
        // `filmstrip serve`. No traits: the server needs neither swift-configuration nor full Foundation.
        .package(url: "https://github.com/hummingbird-project/hummingbird.git", from: "2.28.1", traits: []),
        // Hummingbird's own transport: the server reads its I/O errors (a port in use).
        .package(url: "https://github.com/apple/swift-nio.git", from: "2.101.2"),
    ],
    targets: [
        .systemLibrary(
            name: "CTurboJPEG",
            pkgConfig: "libturbojpeg",
            providers: [.apt(["libturbojpeg0-dev"]), .brew(["jpeg-turbo"])]
        ),
        .systemLibrary(
            name: "CPNG",
            pkgConfig: "libpng",
            providers: [.apt(["libpng-dev"]), .brew(["libpng"])]
        ),
        .systemLibrary(
            name: "CWebP",
            pkgConfig: "libwebp",
            providers: [.apt(["libwebp-dev"]), .brew(["webp"])]
        ),
        // libcurl: the HTTP transport on Linux (FoundationNetworking links it already; see CurlDataLoader).
        .systemLibrary(
            name: "CCurl",
            pkgConfig: "libcurl",
            providers: [.apt(["libcurl4-openssl-dev"])]
        ),
        .systemLibrary(
            name: "CFFmpeg",
            pkgConfig: staticFFmpeg ? "filmstrip-ffmpeg" : "libavformat",
            providers: [
                .apt([
                    "libavformat-dev", "libavcodec-dev", "libswscale-dev", "libswresample-dev", "libavfilter-dev",
                    "libavutil-dev",
                ]), .brew(["ffmpeg"]),
            ]
        ),
        // SDL2's headers; the library itself is loaded with dlopen when a window opens (see CSDL.h).
        .target(name: "CSDL", linkerSettings: [.linkedLibrary("dl", .when(platforms: [.linux]))]),
        .target(name: "FilmstripFormats"),
        .target(
            name: "FilmstripImaging",
            dependencies: ["FilmstripFormats", "CTurboJPEG", "CPNG", "CWebP"]
        ),
        // The locks and atomics every module uses (a ThreadSanitizer-visible Mutex under -DFILMSTRIP_TSAN).
        .target(name: "FilmstripSync"),
        .target(
            name: "FilmstripLoading",
            dependencies: [
                "FilmstripSync",
                .target(name: "CCurl", condition: .when(platforms: [.linux])),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Crypto", package: "swift-crypto"),
            ]
        ),
        .target(
            name: "FilmstripStreaming",
            dependencies: [
                "FilmstripSync",
                "FilmstripFormats", "FilmstripLoading",
                // AES-128-CBC for encrypted HLS segments.
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "_CryptoExtras", package: "swift-crypto"),
            ]
        ),
        .target(
            name: "FilmstripThumbnails",
            dependencies: [
                "FilmstripSync",
                "FilmstripFormats", "FilmstripImaging", "FilmstripLoading", "FilmstripStreaming",
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        .target(
            name: "FilmstripMedia",
            dependencies: [
                "FilmstripSync",
                "CFFmpeg", "FilmstripFormats", "FilmstripImaging", "FilmstripLoading", "FilmstripStreaming",
                "FilmstripThumbnails",
                .product(name: "Logging", package: "swift-log"),
            ],
            linkerSettings: ffmpegLibraries
        ),
        .target(
            name: "FilmstripPreviews",
            dependencies: [
                "FilmstripSync", "FilmstripFormats", "FilmstripImaging", "FilmstripLoading", "FilmstripStreaming",
                "FilmstripMedia",
            ]
        ),
        .target(
            name: "FilmstripPlayer",
            dependencies: [
                "FilmstripSync",
                "FilmstripFormats", "FilmstripImaging", "FilmstripLoading", "FilmstripMedia", "FilmstripStreaming",
            ]
        ),
        // Catalog generation: the worker that batch engines (Slurm, Kubernetes, AWS Batch) run over many videos.
        .target(
            name: "FilmstripCatalog",
            dependencies: [
                "FilmstripSync", "FilmstripLoading", "FilmstripMedia", "FilmstripPreviews",
                .product(name: "Crypto", package: "swift-crypto"),
            ]
        ),
        .target(
            name: "Filmstrip",
            dependencies: [
                "FilmstripSync",
                "FilmstripFormats", "FilmstripImaging", "FilmstripLoading", "FilmstripStreaming", "FilmstripThumbnails",
                "FilmstripMedia", "FilmstripPreviews", "FilmstripPlayer",
            ]
        ),
        // `filmstrip play --window`: the player on a screen (SDL2 video and audio, keys, a seek bar with previews).
        .target(
            name: "FilmstripWindow",
            dependencies: ["CSDL", "FilmstripSync", "Filmstrip"]
        ),
        .target(
            name: "FilmstripServer",
            dependencies: [
                "FilmstripSync",
                "FilmstripFormats", "FilmstripImaging", "FilmstripLoading", "FilmstripStreaming", "FilmstripThumbnails",
                "FilmstripMedia", "FilmstripPreviews",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "_CryptoExtras", package: "swift-crypto"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        .target(
            name: "FilmstripTesting",
            dependencies: ["FilmstripSync", "FilmstripFormats", "FilmstripImaging", "FilmstripStreaming"]
        ),
        .executableTarget(
            name: "FilmstripCLI",
            dependencies: [
                "FilmstripSync",
                "Filmstrip", "FilmstripCatalog", "FilmstripServer", "FilmstripWindow",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        .executableTarget(
            name: "FilmstripBench",
            dependencies: ["FilmstripSync", "Filmstrip", "FilmstripPreviews", "FilmstripTesting"],
            path: "Benchmarks/FilmstripBench"
        ),
        // The usage of a typical streaming app, compiled with the package and run by ReferenceUsageTests.
        .target(name: "ReferenceUsage", dependencies: ["Filmstrip"], path: "Examples/ReferenceUsage"),
        // Conformance data is read from the source tree by the tests (see its README), not bundled.
        // Fuzzing/Regressions holds the inputs `make fuzz` found crashes with, read by FuzzRegressionTests.
        .testTarget(
            name: "FilmstripFormatsTests", dependencies: ["FilmstripFormats"],
            exclude: ["Conformance", "Fuzzing/Regressions"]),
        .testTarget(
            name: "FilmstripImagingTests", dependencies: ["FilmstripFormats", "FilmstripImaging", "FilmstripTesting"]),
        .testTarget(
            name: "FilmstripLoadingTests", dependencies: ["FilmstripSync", "FilmstripLoading", "FilmstripTesting"]),
        .testTarget(
            name: "FilmstripThumbnailsTests",
            dependencies: ["FilmstripSync", "Filmstrip", "FilmstripTesting"],
            exclude: ["Conformance"]
        ),
        .testTarget(
            name: "FilmstripMediaTests",
            dependencies: [
                "FilmstripSync", "Filmstrip", "FilmstripFormats", "FilmstripMedia", "FilmstripPreviews",
                "FilmstripStreaming", "FilmstripTesting",
            ]),
        .testTarget(
            name: "FilmstripPlayerTests",
            dependencies: [
                "FilmstripSync",
                "Filmstrip", "FilmstripFormats", "FilmstripImaging", "FilmstripLoading", "FilmstripMedia",
                "FilmstripPlayer", "FilmstripWindow",
                "FilmstripStreaming",
                "FilmstripTesting",
                "ReferenceUsage",
            ]
        ),
        .testTarget(
            name: "FilmstripServerTests",
            dependencies: [
                "FilmstripImaging", "FilmstripLoading", "FilmstripMedia", "FilmstripPreviews", "FilmstripServer",
                "FilmstripSync", "FilmstripTesting",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "_CryptoExtras", package: "swift-crypto"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        .testTarget(
            name: "FilmstripCatalogTests",
            dependencies: ["FilmstripCatalog", "FilmstripMedia", "FilmstripPreviews", "FilmstripTesting"]
        ),
        .testTarget(
            name: "FilmstripCLITests",
            dependencies: ["FilmstripTesting", "FilmstripImaging", "FilmstripFormats", "FilmstripLoading"]
        ),
    ],
    swiftLanguageModes: [.v6]
)

// One settings loop for every Swift target. `make test` (and so CI) sets FILMSTRIP_WARNINGS_AS_ERRORS=1, which
// turns warnings into errors for this package's own targets only, never for dependencies.
let warningsAsErrors = ProcessInfo.processInfo.environment["FILMSTRIP_WARNINGS_AS_ERRORS"] == "1"
for target in package.targets where target.type != .system {
    var settings = target.swiftSettings ?? []
    settings.append(.enableUpcomingFeature("ExistentialAny"))
    settings.append(.enableUpcomingFeature("InternalImportsByDefault"))
    if warningsAsErrors { settings.append(.unsafeFlags(["-warnings-as-errors"])) }
    target.swiftSettings = settings
}
