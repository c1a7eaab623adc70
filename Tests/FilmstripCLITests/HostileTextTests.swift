import FilmstripFormats
import FilmstripImaging
import FilmstripTesting
import Foundation
import Testing

/// Mutated WebVTT tracks, HLS playlists, MPDs and BIF files through `inspect` and `thumbnail` or `frame`, each run a
/// process of its own: every run ends with exit 0 and a right result (the image written decodes), or a typed error
/// (exit 1 or 2 with a message); never a signal, never past its timeout, never above 1 GiB.
///
/// The text formats are mutated by ``TextMutation`` (lines duplicated, dropped, swapped, inserted from tags that
/// carry numbers; numbers replaced by boundary values), one to three times each; BIF files get absurd 32-bit values
/// written over their header and index, and bit flips. `FILMSTRIP_HOSTILE_CASES` sets the cases per class (default
/// 40); `FILMSTRIP_HOSTILE_REPORT` names a file for the Markdown table.
@Suite("Mutated tracks, playlists, MPDs and BIF files through the CLI")
struct HostileTextTests {
    static let casesPerClass = Int(ProcessInfo.processInfo.environment["FILMSTRIP_HOSTILE_CASES"] ?? "") ?? 40
    static let memoryBoundKiB = 1 << 20

    enum Class: String, CaseIterable, Sendable {
        case webvtt = "WebVTT track", hls = "HLS playlist", mpd = "DASH MPD", bif = "BIF"
    }

    struct Case: Sendable {
        var kind: Class
        var seed: UInt64
        var bytes: [UInt8]
    }

    struct Run: Sendable {
        var kind: Class
        var command: String
        var result: ProbeResult
        var problems: [String]
    }

    @Test("every mutated input ends in a result or a typed error: no signal, no hang, bounded memory")
    func corpus() async throws {
        let binary = try cliExecutable().path
        let work = try TemporaryDirectory()
        defer { work.remove() }
        // The media the inputs name: a sheet, the TS segments of an HLS rendition, the fMP4 segments of a DASH one.
        let sheet = try SpriteSheetFixture.encoded(
            columns: 4, rows: 3, cellWidth: 32, cellHeight: 18, format: .jpeg, texture: 6)
        _ = try work.write("sheet.jpg", sheet)
        var track = "WEBVTT\n\n"
        for k in 0..<12 {
            track += "\(TrackFixture.timestamp(milliseconds: Int64(k) * 1000)) --> "
            track += "\(TrackFixture.timestamp(milliseconds: Int64(k + 1) * 1000))\nsheet.jpg#xywh="
            track += "\(k % 4 * 32),\(k / 4 * 18),32,18\n\n"
        }
        let hls = try Self.copy(StreamLayouts.directory(.hlsTS), to: work.url.appendingPathComponent("hls"))
        let dash = try Self.copy(StreamLayouts.directory(.dashTimeline), to: work.url.appendingPathComponent("dash"))
        let playlist = try Array(Data(contentsOf: try StreamLayouts.manifest(.hlsTS)))
        let mpd = try Array(Data(contentsOf: try StreamLayouts.manifest(.dashTimeline)))
        let bif = BIFFixture.make(images: Array(repeating: sheet, count: 4), timestamps: [0, 3, 6, 9])
        var cases: [Case] = []
        for (c, kind) in Class.allCases.enumerated() {
            for k in 0..<Self.casesPerClass {
                let seed = UInt64(c * 100_003 + k) &* 0x9E37_79B9 &+ 2026
                var random = SeededGenerator(seed: seed)
                let original: [UInt8] =
                    switch kind {
                    case .webvtt: Array(track.utf8)
                    case .hls: playlist
                    case .mpd: mpd
                    case .bif: bif
                    }
                var bytes = original
                if kind == .bif {
                    bytes = Self.damageBIF(bytes, using: &random)
                } else {
                    for _ in 0...(random.next() % 3) { bytes = TextMutation.mutate(bytes, using: &random) }
                }
                cases.append(Case(kind: kind, seed: seed, bytes: bytes))
            }
        }
        let corpus = cases
        let folders = (webvtt: work.url, hls: hls, dash: dash)
        let runs = await onThreads(corpus.count, threads: 2) { i in
            Self.run(corpus[i], index: i, binary: binary, folders: folders, scratch: work.url)
        }.flatMap { $0 }
        let report = Self.report(runs)
        print(report)
        if let path = ProcessInfo.processInfo.environment["FILMSTRIP_HOSTILE_REPORT"] {
            try report.write(toFile: path, atomically: true, encoding: .utf8)
        }
        #expect(runs.count == corpus.count * 2)
        for run in runs where !run.problems.isEmpty {
            Issue.record("\(run.kind.rawValue) \(run.command): \(run.problems.joined(separator: "; "))")
        }
        // The corpus is not all refused: the mutations leave many inputs readable.
        for kind in Class.allCases {
            #expect(runs.contains { $0.kind == kind && $0.result.status == 0 }, "\(kind.rawValue): no run succeeded")
        }
    }

    // MARK: Running

    static func run(
        _ item: Case, index: Int, binary: String, folders: (webvtt: URL, hls: URL, dash: URL), scratch: URL
    ) -> [Run] {
        let fm = FileManager.default
        let directory = scratch.appendingPathComponent("run-\(index)").path
        try? fm.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? fm.removeItem(atPath: directory) }
        let image = directory + "/out.png"
        // Each input sits beside the media it names, under a name of its own.
        let input: String
        var commands: [(name: String, arguments: [String])]
        switch item.kind {
        case .webvtt:
            input = folders.webvtt.appendingPathComponent("case-\(index).vtt").path
            commands = [
                ("inspect --check", ["inspect", "--check", input]),
                ("thumbnail", ["thumbnail", input, "--at", "\(index % 12).5", "--output", image]),
            ]
        case .hls, .mpd:
            let folder = item.kind == .hls ? folders.hls : folders.dash
            input = folder.appendingPathComponent("case-\(index)." + (item.kind == .hls ? "m3u8" : "mpd")).path
            commands = [
                ("inspect", ["inspect", input]),
                ("frame", ["frame", input, "--at", "\(index % 9).3", "--output", image]),
            ]
        case .bif:
            input = directory + "/case.bif"
            commands = [
                ("inspect --check", ["inspect", "--check", input]),
                ("thumbnail", ["thumbnail", input, "--at", "\(index % 12).5", "--output", image]),
            ]
        }
        _ = fm.createFile(atPath: input, contents: Data(item.bytes))
        defer { try? fm.removeItem(atPath: input) }
        return commands.map { command in
            try? fm.removeItem(atPath: image)
            let result = probe(binary, command.arguments, timeout: 30, directory: directory)
            var problems: [String] = []
            if result.timedOut {
                problems.append("no end within 30 s")
            } else if let signal = result.signal {
                problems.append("ended by signal \(signal)")
            } else if result.status == 0 {
                if command.arguments.contains("--output"), let wrong = DamagedMediaTests.checkImage(image, width: nil) {
                    problems.append("exit 0 but \(wrong)")
                }
            } else if result.status == 1 || result.status == 2 {
                // `inspect --check` exits 1 with its findings on standard output.
                let findings = command.name == "inspect --check" && result.status == 1
                if !findings && !result.stderr.contains("filmstrip") && !result.stderr.contains("rror") {
                    problems.append("exit \(result.status ?? -1) without a message")
                }
                if result.stderr.count > 4000 { problems.append("a message of \(result.stderr.count) characters") }
            } else {
                problems.append("exit \(result.status ?? -1): \(result.stderr.suffix(300))")
            }
            if result.peakRSSKiB > memoryBoundKiB { problems.append("peak RSS \(result.peakRSSKiB / 1024) MiB") }
            if !problems.isEmpty {
                problems.append("seed \(item.seed), input: \(String(decoding: item.bytes.prefix(600), as: UTF8.self))")
            }
            return Run(kind: item.kind, command: command.name, result: result, problems: problems)
        }
    }

    /// Absurd 32-bit values over a BIF's header and index (counts, offsets, timestamps), and a few bit flips.
    static func damageBIF(_ bytes: [UInt8], using random: inout SeededGenerator) -> [UInt8] {
        var out = bytes
        let values: [UInt32] = [0, 1, 0x7FFF_FFFF, 0x8000_0000, 0xFFFF_FFFF, 0xFFFF_FFFE, UInt32(bytes.count)]
        for _ in 0...(random.next() % 3) {
            let at = Int(random.next() % UInt64(max(1, min(bytes.count, 64 + 8 * 6) / 4))) * 4
            guard at + 4 <= out.count else { continue }
            let value = values[Int(random.next() % UInt64(values.count))]
            for k in 0..<4 { out[at + k] = UInt8(truncatingIfNeeded: value >> (8 * k)) }
        }
        if random.next() % 2 == 0 {
            let at = Int(random.next() % UInt64(out.count))
            out[at] ^= UInt8(1 << (random.next() % 8))
        }
        return out
    }

    static func copy(_ source: URL, to target: URL) throws -> URL {
        try FileManager.default.copyItem(at: source, to: target)
        return target
    }

    // MARK: Report

    static func report(_ runs: [Run]) -> String {
        var lines = [
            "| input | command | runs | exit 0, right result | typed error (1/2) | signals | hangs | wrong results | peak RSS |",
            "| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
        ]
        for kind in Class.allCases {
            for command in Array(Set(runs.filter { $0.kind == kind }.map(\.command))).sorted() {
                let group = runs.filter { $0.kind == kind && $0.command == command }
                lines.append(
                    "| \(kind.rawValue) | `\(command)` | " + outcomeCells(group.map { ($0.result, $0.problems) }))
            }
        }
        let slowest = runs.map(\.result.seconds).max() ?? 0
        lines.append("")
        lines.append("\(runs.count) runs, slowest \(String(format: "%.2f", slowest)) s.")
        return lines.joined(separator: "\n")
    }
}
