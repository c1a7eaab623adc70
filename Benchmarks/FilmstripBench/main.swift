import Filmstrip
import FilmstripTesting
import Foundation

// The benchmark for `make bench` (release build). Run from the package root:
//   .build/release/FilmstripBench            all figures (prints a report)
//   .build/release/FilmstripBench rss-client TRACK-URL CACHE-DIR   (used internally for the RSS figure)

let arguments = CommandLine.arguments.dropFirst()
if arguments.first == "rss-client" {
    let values = Array(arguments.dropFirst())
    try await RSSClient.run(trackURL: URL(string: values[0])!, cacheDirectory: URL(fileURLWithPath: values[1]))
    exit(0)
}

if arguments.first == "parse-only" {
    // For profilers: parse the 10,800-cue track 20 times and nothing else.
    let text = TrackFixture.sprites(count: BenchFixture.cueCount, sheetName: { "sheets/sprite-\($0).jpg" })
    let bytes = Array(text.utf8)
    var cues = 0
    for _ in 0..<20 {
        cues += try WebVTTThumbnailParser().parse(bytes, trackURL: URL(fileURLWithPath: "/tmp/t.vtt")).cues.count
    }
    print(cues)
    exit(0)
}

if arguments.first == "formats" {
    // Only the per-format lookups and the prefetch waves.
    let work = try TemporaryDirectory(prefix: "filmstrip-bench")
    defer { work.remove() }
    try await FormatBenchmark.run(try BenchFixture(directory: work))
    exit(0)
}

if arguments.first == "scrub" {
    // Only the scrub-trace replays (also part of the default run).
    let work = try TemporaryDirectory(prefix: "filmstrip-bench")
    defer { work.remove() }
    // `scrub waves` (or any strategies by name, hyphenated) replays those alone.
    let named = arguments.dropFirst().compactMap {
        ScrubBenchmark.Strategy(rawValue: $0.replacingOccurrences(of: "-", with: " "))
    }
    try await ScrubBenchmark.run(
        try BenchFixture(directory: work),
        tracesDirectory: URL(fileURLWithPath: "Benchmarks/traces", isDirectory: true),
        strategies: named.isEmpty ? ScrubBenchmark.Strategy.allCases : named)
    exit(0)
}

if arguments.first == "stream" {
    // Only the HLS benchmarks (also part of `media`).
    let directory = URL(fileURLWithPath: arguments.dropFirst().first ?? "bench-output/media", isDirectory: true)
    let filmstrip = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
        .appendingPathComponent("filmstrip").path
    try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    try StreamBenchmark.run(mediaDirectory: directory, filmstrip: filmstrip)
    exit(0)
}

if arguments.first == "playback" {
    // Only the audio CPU and trick-play byte figures (also part of `media`).
    let directory = URL(fileURLWithPath: arguments.dropFirst().first ?? "bench-output/media", isDirectory: true)
    let filmstrip = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
        .appendingPathComponent("filmstrip").path
    try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    try await PlaybackBenchmark.run(mediaDirectory: directory, filmstrip: filmstrip)
    exit(0)
}

if arguments.first == "streams" {
    // Only the MPD parse and the HLS fMP4 / DASH frame figures (also part of `media`).
    let directory = URL(fileURLWithPath: arguments.dropFirst().first ?? "bench-output/media", isDirectory: true)
    let filmstrip = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
        .appendingPathComponent("filmstrip").path
    let inputs = try MediaBenchmark.makeInputs(in: directory)
    try DASHBenchmark.run(mediaDirectory: directory, filmstrip: filmstrip, source: inputs[0].file)
    for input in inputs {
        try await FramesBenchmark.run(
            mediaDirectory: directory, source: input.file,
            label: String(input.name.split(separator: "-").first ?? "video"))
    }
    exit(0)
}

if arguments.first == "generate" {
    // Only the generation figures (a minute instead of five).
    let directory = URL(fileURLWithPath: arguments.dropFirst().first ?? "bench-output/media", isDirectory: true)
    try await MediaBenchmark.runGeneration(mediaDirectory: directory)
    exit(0)
}

if arguments.first == "sheet-bytes" {
    // Only the bytes of JPEG and WebP sheets at equal SSIM (also part of `media`).
    let directory = URL(fileURLWithPath: arguments.dropFirst().first ?? "bench-output/media", isDirectory: true)
    try SheetBytesBenchmark.run(mediaDirectory: directory)
    exit(0)
}

if arguments.first == "local-frame" {
    // Only `frame` on the local files, against ffmpegthumbnailer, and the library call.
    let directory = URL(fileURLWithPath: arguments.dropFirst().first ?? "bench-output/media", isDirectory: true)
    try await MediaBenchmark.runLocalFrame(mediaDirectory: directory)
    exit(0)
}

if arguments.first == "http-frame" {
    // Only `frame` over HTTP: the loopback server with Range, and Python's http.server without.
    let directory = URL(fileURLWithPath: arguments.dropFirst().first ?? "bench-output/media", isDirectory: true)
    try MediaBenchmark.runRemoteFrame(mediaDirectory: directory)
    exit(0)
}

if arguments.first == "live" {
    // Live production: latency from the origin to the published track, and CPU per channel-hour.
    let directory = URL(fileURLWithPath: arguments.dropFirst().first ?? "bench-output/media", isDirectory: true)
    try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    try await LiveBenchmark.run(mediaDirectory: directory)
    exit(0)
}

if arguments.first == "media" {
    // Media benchmarks: generation and frames against the ffmpeg CLI; inputs are kept in bench-output/media.
    let directory = URL(fileURLWithPath: arguments.dropFirst().first ?? "bench-output/media", isDirectory: true)
    try await MediaBenchmark.run(mediaDirectory: directory)
    try SheetBytesBenchmark.run(mediaDirectory: directory)
    for input in try MediaBenchmark.makeInputs(in: directory) {
        try await FramesBenchmark.run(
            mediaDirectory: directory, source: input.file,
            label: String(input.name.split(separator: "-").first ?? "video"))
    }
    exit(0)
}

let work = try TemporaryDirectory(prefix: "filmstrip-bench")
defer { work.remove() }
if arguments.first == "thumbnails" {
    // Only getThumbnail: cold, warm, 10,000 concurrent lookups, 8 threads, crop + encode.
    try await ThumbnailBenchmark.run(try BenchFixture(directory: work))
    exit(0)
}
print("Filmstrip benchmarks (release build, \(ProcessInfo.processInfo.activeProcessorCount) cores)")
print("")
let fixture = try BenchFixture(directory: work)
try ParseBenchmark.run(fixture)
LookupBenchmark.run(fixture)
try await FormatBenchmark.run(fixture)
try await ScrubBenchmark.run(fixture, tracesDirectory: URL(fileURLWithPath: "Benchmarks/traces", isDirectory: true))
try await ThumbnailBenchmark.run(fixture)
try RSSBenchmark.run(fixture)
