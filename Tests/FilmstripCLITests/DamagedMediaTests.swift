import FilmstripFormats
import FilmstripImaging
import FilmstripTesting
import Foundation
import Testing

/// A seeded corpus of damaged MP4, fragmented MP4, MPEG-TS, JPEG and PNG files through `frame`, `generate`,
/// `thumbnail` and `play`, each in a process of its own: every run ends with exit 0 and a right result, or a typed
/// error (exit 1 or 2 with a message); never a signal, never past its timeout, never above the memory bound.
///
/// `FILMSTRIP_DAMAGE_CASES` sets the cases per container and kind of damage (default 24: 840 files, about 2,000
/// runs); `FILMSTRIP_DAMAGE_REPORT` names a file for the Markdown table; `FILMSTRIP_DAMAGE_SEED` changes the
/// corpus; `FILMSTRIP_DAMAGE_KEEP` names a directory where the file of every run that fails is kept.
@Suite("Damaged media through the CLI")
struct DamagedMediaTests {
    static let casesPerKind = Int(ProcessInfo.processInfo.environment["FILMSTRIP_DAMAGE_CASES"] ?? "") ?? 24
    static let seed = UInt64(ProcessInfo.processInfo.environment["FILMSTRIP_DAMAGE_SEED"] ?? "") ?? 2026
    /// Only the cases of this container (`FILMSTRIP_DAMAGE_CONTAINER`), to replay one kind quickly.
    static let onlyContainer = ProcessInfo.processInfo.environment["FILMSTRIP_DAMAGE_CONTAINER"].flatMap {
        DamagedMedia.Container(rawValue: $0)
    }
    /// Peak resident memory any one run may reach.
    static let memoryBoundKiB = 1 << 20

    @Test("the generator is reproducible and each kind of damage does what it says")
    func generator() throws {
        let mp4 = try Self.source(.mp4)
        for damage in DamagedMedia.Damage.allCases {
            let a = DamagedMedia.damage(mp4, as: .mp4, with: damage, seed: 7)
            let b = DamagedMedia.damage(mp4, as: .mp4, with: damage, seed: 7)
            #expect(a.bytes == b.bytes && a.note == b.note)
            #expect(a.bytes != mp4, "\(damage): \(a.note)")
            #expect(!a.note.hasPrefix("no target"), "\(damage): \(a.note)")
        }
        for container in [DamagedMedia.Container.ts, .fmp4, .jpeg, .png] {
            let original = try Self.source(container)
            for damage in DamagedMedia.Damage.allCases {
                let notes = (0..<12).map { DamagedMedia.damage(original, as: container, with: damage, seed: $0).note }
                #expect(notes.filter { $0.hasPrefix("no target") }.count <= 3, "\(container) \(damage): \(notes)")
            }
        }
        // Swapping keeps every byte; an absurd SPS is decodable as one (its size is in the note).
        let swapped = DamagedMedia.damage(mp4, as: .mp4, with: .swappedBoxes, seed: 3)
        #expect(swapped.bytes.sorted() == mp4.sorted())
    }

    @Test("a video declaring an impossible size is refused before a frame is decoded or a sheet planned")
    func impossibleSizes() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let mp4 = try Self.source(.mp4)
        // The sample entry: the first avc1 after stsd (ftyp names avc1 among its brands too).
        let stsd = try #require((0..<mp4.count - 4).first { mp4[$0..<$0 + 4] == ArraySlice("stsd".utf8) })
        let entry = try #require((stsd..<mp4.count - 4).first { mp4[$0..<$0 + 4] == ArraySlice("avc1".utf8) }) + 4
        // The sample entry's width and height (after 24 bytes of reserved and predefined fields).
        for (width, height, reason) in [(96, 40_000, "the limit"), (4000, 64, "16:1")] {
            var bytes = mp4
            bytes[entry + 24] = UInt8(width >> 8)
            bytes[entry + 25] = UInt8(width & 0xFF)
            bytes[entry + 26] = UInt8(height >> 8 & 0xFF)
            bytes[entry + 27] = UInt8(height & 0xFF)
            let file = try directory.write("declared-\(width)x\(height).mp4", bytes)
            for command in [
                ["frame", file.path, "--at", "1"], ["generate", file.path, "--output", directory.url.path],
            ] {
                let result = try await filmstripArguments(command)
                #expect(result.status == 2, "\(command[0]) \(width)x\(height): \(result.stderr)")
                #expect(result.stderr.contains("declares a size"), "\(result.stderr)")
                #expect(result.stderr.contains(reason), "\(result.stderr)")
            }
        }
        // A sample entry that leaves the size out (0 wide) is no bound to break: the size comes from the pictures
        // (as H.263 in 3GP needs), and the frame is the picture's own size.
        var unsized = mp4
        for i in (entry + 24)..<(entry + 26) { unsized[i] = 0 }
        let file = try directory.write("declared-0x64.mp4", unsized)
        let result = try await filmstripArguments(["frame", file.path, "--at", "1", "--json"])
        #expect(result.status == 0, "\(result.stderr)")
        let frame = try #require(try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any])
        #expect(frame["width"] as? Int == 96 && frame["height"] as? Int == 64, "\(result.stdout)")
    }

    @Test("a track that would pass --max-thumbnails is refused before anything is decoded")
    func thumbnailBound() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let video = try directory.write("three-seconds.mp4", try Self.source(.mp4))
        let output = directory.url.appendingPathComponent("out").path
        let refused = try await filmstrip(
            "generate", video.path, "--output", output, "--interval", "1", "--max-thumbnails", "2")
        #expect(refused.status == 2)
        #expect(refused.stderr.contains("makes 3 thumbnails; the limit is 2"), "\(refused.stderr)")
        #expect(!FileManager.default.fileExists(atPath: output + "/thumbnails.vtt"))
        let counted = try await filmstrip(
            "generate", video.path, "--output", output, "--count", "5", "--max-thumbnails", "4")
        #expect(counted.status == 2 && counted.stderr.contains("the limit is 4"), "\(counted.stderr)")
        let fits = try await filmstrip(
            "generate", video.path, "--output", output, "--interval", "1", "--max-thumbnails", "3")
        #expect(fits.status == 0, "\(fits.stderr)")
    }

    @Test("every damaged file ends in a result or a typed error: no signal, no hang, bounded memory")
    func corpus() async throws {
        let binary = try cliExecutable().path
        let work = FileManager.default.temporaryDirectory.appendingPathComponent(
            "filmstrip-damage-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: work, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: work) }
        var sources: [DamagedMedia.Container: [UInt8]] = [:]
        for container in DamagedMedia.Container.allCases {
            sources[container] = try Self.source(container)
        }
        var cases: [DamagedMedia.Case] = []
        for (c, container) in DamagedMedia.Container.allCases.enumerated()
        where Self.onlyContainer == nil || Self.onlyContainer == container {
            for (d, damage) in DamagedMedia.Damage.allCases.enumerated() {
                for k in 0..<Self.casesPerKind {
                    // The same seed for a case whatever else runs (FILMSTRIP_DAMAGE_CONTAINER replays it).
                    let ordinal = UInt64((c * DamagedMedia.Damage.allCases.count + d) * Self.casesPerKind + k)
                    let seed = Self.seed &* 1_000_003 &+ ordinal &+ UInt64(k) << 32
                    cases.append(DamagedMedia.damage(sources[container]!, as: container, with: damage, seed: seed))
                }
            }
        }
        let corpus = cases
        let runs = await onThreads(corpus.count, threads: 2) { i in
            Self.run(corpus[i], index: i, binary: binary, in: work.appendingPathComponent("\(i)"))
        }.flatMap { $0 }
        let report = Self.report(runs)
        print(report)
        if let path = ProcessInfo.processInfo.environment["FILMSTRIP_DAMAGE_REPORT"] {
            try report.write(toFile: path, atomically: true, encoding: .utf8)
        }
        #expect(runs.count >= corpus.count * 2)
        for run in runs where !run.problems.isEmpty {
            Issue.record("\(run.label): \(run.problems.joined(separator: "; ")) [\(run.note)]")
        }
    }

    // MARK: Running

    struct Run: Sendable {
        var container: DamagedMedia.Container
        var damage: DamagedMedia.Damage
        var command: String
        var label: String
        var note: String
        var result: ProbeResult
        var problems: [String]
    }

    static func run(_ item: DamagedMedia.Case, index: Int, binary: String, in directory: URL) -> [Run] {
        let fm = FileManager.default
        try? fm.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? fm.removeItem(at: directory) }
        let path = directory.path
        var commands: [(name: String, arguments: [String], timeout: Double, check: (String) -> String?)] = []
        switch item.container {
        case .mp4, .fmp4, .ts:
            let input = path + "/input." + (item.container == .ts ? "ts" : "mp4")
            _ = fm.createFile(atPath: input, contents: Data(item.bytes))
            commands = [
                (
                    "frame", ["frame", input, "--at", "1", "--output", path + "/frame.jpg"], 30,
                    { _ in
                        checkImage(path + "/frame.jpg", width: nil)
                    }
                ),
                (
                    "generate",
                    [
                        "generate", input, "--output", path + "/gen", "--interval", "1", "--workers", "1",
                        "--max-thumbnails", "3600",
                    ], 60,
                    { _ in checkTrack(path + "/gen/thumbnails.vtt") }
                ),
                (
                    "thumbnail", ["thumbnail", "--engine", "frames", input, "--at", "1", "--output", path + "/t.jpg"],
                    30,
                    {
                        _ in checkImage(path + "/t.jpg", width: nil)
                    }
                ),
            ]
            if index % 3 == 0 {
                commands.append(("play", ["play", input, "--autoplay", "--duration", "0.3"], 30, { _ in nil }))
            }
        case .jpeg, .png:
            let name = "sheet." + (item.container == .jpeg ? "jpg" : "png")
            _ = fm.createFile(atPath: path + "/" + name, contents: Data(item.bytes))
            var track = "WEBVTT\n\n"
            for k in 0..<12 {
                let (x, y) = (k % 4 * 32, k / 4 * 18)
                track += "00:00:\(String(format: "%02d", k)).000 --> 00:00:\(String(format: "%02d", k + 1)).000\n"
                track += "\(name)#xywh=\(x),\(y),32,18\n\n"
            }
            _ = fm.createFile(atPath: path + "/track.vtt", contents: Data(track.utf8))
            let at = String(index % 12) + ".5"
            commands = [
                (
                    "thumbnail", ["thumbnail", path + "/track.vtt", "--at", at, "--output", path + "/t.png"], 30,
                    { _ in checkImage(path + "/t.png", width: 32) }
                )
            ]
        }
        return commands.map { command in
            let result = probe(binary, command.arguments, timeout: command.timeout, directory: path)
            var problems: [String] = []
            if result.timedOut {
                problems.append("no end within \(command.timeout) s")
            } else if let signal = result.signal {
                problems.append("ended by signal \(signal)")
            } else if result.status == 0 {
                if let wrong = command.check(path) { problems.append("exit 0 but \(wrong)") }
            } else if result.status == 1 || result.status == 2 {
                if !result.stderr.contains("filmstrip") && !result.stderr.contains("rror") {
                    problems.append("exit \(result.status ?? -1) without a message")
                }
            } else {
                problems.append("exit \(result.status ?? -1): \(result.stderr.suffix(300))")
            }
            if result.peakRSSKiB > memoryBoundKiB { problems.append("peak RSS \(result.peakRSSKiB / 1024) MiB") }
            if !problems.isEmpty, let keep = ProcessInfo.processInfo.environment["FILMSTRIP_DAMAGE_KEEP"] {
                // The damaged file, for replaying the command by hand.
                let name = "\(item.container.rawValue)-\(item.damage.rawValue)-\(item.seed)-\(command.name)"
                try? fm.createDirectory(atPath: keep, withIntermediateDirectories: true)
                _ = fm.createFile(atPath: keep + "/" + name, contents: Data(item.bytes))
            }
            return Run(
                container: item.container, damage: item.damage, command: command.name,
                label: "\(item.container.rawValue) \(item.damage.rawValue) seed \(item.seed) \(command.name)",
                note: item.note, result: result, problems: problems)
        }
    }

    /// `nil` when the file is an image (of `width` when given).
    static func checkImage(_ path: String, width: Int?) -> String? {
        guard let data = FileManager.default.contents(atPath: path) else { return "no image written" }
        guard let (image, _) = try? ImageCodec.decode(Array(data)) else { return "the image written does not decode" }
        guard image.width > 0, image.height > 0, image.width <= 8192, image.height <= 8192 else {
            return "an image of \(image.width)x\(image.height)"
        }
        if let width, image.width != width { return "an image \(image.width) wide instead of \(width)" }
        return nil
    }

    /// `nil` when the track parses and every sheet it names exists and decodes.
    static func checkTrack(_ path: String) -> String? {
        let url = URL(fileURLWithPath: path)
        guard let data = FileManager.default.contents(atPath: path) else { return "no track written" }
        guard let track = try? WebVTTThumbnailParser().parse(Array(data), trackURL: url) else {
            return "the track written does not parse"
        }
        guard !track.cues.isEmpty else { return "a track without cues" }
        for image in track.images {
            if let wrong = checkImage(image.path, width: nil) { return "\(image.lastPathComponent): \(wrong)" }
        }
        return nil
    }

    // MARK: Report

    static func report(_ runs: [Run]) -> String {
        var lines = [
            "| container | damage | runs | exit 0, right result | typed error (1/2) | signals | hangs | wrong results | peak RSS |",
            "| --- | --- | --- | --- | --- | --- | --- | --- | --- |",
        ]
        for container in DamagedMedia.Container.allCases {
            for damage in DamagedMedia.Damage.allCases {
                let group = runs.filter { $0.container == container && $0.damage == damage }
                guard !group.isEmpty else { continue }
                lines.append(
                    "| \(container.rawValue) | \(damage.rawValue) | "
                        + outcomeCells(group.map { ($0.result, $0.problems) }))
            }
        }
        let commands = Dictionary(grouping: runs, by: \.command).sorted { $0.key < $1.key }.map {
            "\($0.key) \($0.value.count)"
        }
        let slowest = runs.map(\.result.seconds).max() ?? 0
        lines.append("")
        lines.append(
            "\(runs.count) runs (\(commands.joined(separator: ", "))), slowest \(String(format: "%.2f", slowest)) s, "
                + "peak RSS \((runs.map(\.result.peakRSSKiB).max() ?? 0) / 1024) MiB.")
        return lines.joined(separator: "\n")
    }

    // MARK: Sources

    /// The undamaged files: 3 s of 96x64 video at 10 fps (a keyframe a second) with AAC audio, as MP4 (index in
    /// front), fragmented MP4 and MPEG-TS; a 4x3 sheet of 32x18 cells as JPEG and PNG.
    static func source(_ container: DamagedMedia.Container) throws -> [UInt8] {
        let recipe = [
            "-f", "lavfi", "-i", "testsrc2=s=96x64:r=10:d=3", "-f", "lavfi", "-i", "sine=frequency=440:duration=3",
            "-c:v", "libx264", "-preset", "veryfast", "-g", "10", "-pix_fmt", "yuv420p", "-c:a", "aac", "-b:a", "32k",
            "-shortest",
        ]
        let file: URL
        switch container {
        case .mp4: file = try MediaFixtures.make("damage-source.mp4", recipe + ["-movflags", "+faststart"])
        case .fmp4:
            file = try MediaFixtures.make(
                "damage-source-fragmented.mp4", recipe + ["-movflags", "+frag_keyframe+empty_moov+default_base_moof"])
        case .ts: file = try MediaFixtures.make("damage-source.ts", recipe)
        case .jpeg, .png:
            return try SpriteSheetFixture.encoded(
                columns: 4, rows: 3, cellWidth: 32, cellHeight: 18, format: container == .jpeg ? .jpeg : .png,
                texture: 6)
        }
        return try Array(Data(contentsOf: file))
    }
}
