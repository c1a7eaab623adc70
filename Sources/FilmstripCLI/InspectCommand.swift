import ArgumentParser
import Filmstrip
import Foundation

struct InspectCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "inspect",
        abstract: "Summarise a thumbnail track, or an HLS playlist or DASH MPD.",
        discussion: """
            For a thumbnail track: cues, covered time, gaps, overlaps, images, diagnostics. With --check, every \
            image is fetched and every cue's region is verified to lie inside its image; the exit status is 1 when \
            a problem is found.

            For an HLS master or media playlist or a DASH MPD (.m3u8, .mpd, or a local file that starts like one): \
            periods, tracks, renditions (codecs, resolution, bandwidth, language) with their segment counts and \
            durations (media playlists and segment indexes are loaded), and the live window.

            Example:
              filmstrip inspect https://cdn.example.com/stream/manifest.mpd --json
            """
    )

    @Argument(help: "Path or URL of a WebVTT thumbnail track, an HLS playlist or a DASH MPD.")
    var track: String

    @Flag(help: "Print one JSON object on standard output.")
    var json = false

    @Flag(help: "Fetch every image and verify that every region lies inside its image.")
    var check = false

    @Flag(help: "Skip malformed cues instead of failing.")
    var lenient = false

    @OptionGroup var cache: CacheOptions

    @Flag(help: "Use only the disk cache.")
    var offline = false

    func run() async throws {
        let url = resourceURL(track)
        if ManifestDetection.isManifest(url) {
            let report: PresentationReport
            do {
                report = try await PresentationReport.load(url)
            } catch {
                throw fail(error)
            }
            print(json ? report.json.text : report.text)
            return
        }
        var configuration = ThumbnailsConfiguration()
        configuration.loadingMode = .lazy
        configuration.parsingMode = lenient ? .lenient : .strict
        configuration.cacheDirectory = cache.directory
        configuration.offline = offline
        let thumbnails = TrackThumbnails(configuration: configuration)
        do {
            try await thumbnails.load(webVTTTrack: url)
        } catch {
            throw fail(error)
        }
        guard let parsed = thumbnails.track else { throw fail(ThumbnailsError(.notLoaded, "the track did not load")) }
        let summary = TrackSummary(parsed)
        var problems: [CheckProblem] = []
        if check {
            problems = await checkImages(parsed, loader: thumbnails.loader, offline: offline)
        }
        if json {
            print(summary.json(track: parsed, problems: check ? problems : nil).text)
        } else {
            print(summary.text(track: parsed, problems: check ? problems : nil))
        }
        if check, !problems.isEmpty { throw ExitStatus.notFound }
    }

    private func checkImages(_ track: ThumbnailTrack, loader: ResourceLoader, offline: Bool) async -> [CheckProblem] {
        var problems: [CheckProblem] = []
        var sizes: [Int: ImageInfo] = [:]
        for (index, url) in track.images.enumerated() {
            do {
                let data = try await loader.data(for: url, policy: offline ? .cacheOnly : .cacheFirst)
                sizes[index] = try ImageCodec.info(data)
            } catch {
                problems.append(CheckProblem(line: nil, image: url, message: "\(error)"))
            }
        }
        for cue in track.cues {
            guard let region = cue.region, let info = sizes[Int(cue.imageIndex)] else { continue }
            let inside: Bool
            switch region.unit {
            case .pixel:
                inside =
                    Int(region.x) + Int(region.width) <= info.width
                    && Int(region.y) + Int(region.height) <= info.height
            case .percent:
                inside = Int(region.x) + Int(region.width) <= 100 && Int(region.y) + Int(region.height) <= 100
            }
            if !inside {
                problems.append(
                    CheckProblem(
                        line: Int(cue.line), image: track.imageURL(of: cue),
                        message: "region \(region) exceeds the \(info.width)x\(info.height) image"))
            }
        }
        return problems
    }
}

struct CheckProblem {
    var line: Int?
    var image: URL
    var message: String
}

/// Coverage, gaps and overlaps of a track's cues.
struct TrackSummary {
    struct Span {
        var start: Double
        var end: Double
    }

    var coveredSeconds = 0.0
    var gaps: [Span] = []
    var overlaps: [(line: Int, span: Span)] = []
    var first = 0.0
    var last = 0.0

    init(_ track: ThumbnailTrack) {
        guard let firstCue = track.cues.first else { return }
        first = firstCue.start
        var runStart = firstCue.start
        var runEnd = firstCue.end
        for cue in track.cues.dropFirst() {
            if cue.start > runEnd {
                gaps.append(Span(start: runEnd, end: cue.start))
                coveredSeconds += runEnd - runStart
                runStart = cue.start
                runEnd = cue.end
            } else {
                if cue.start < runEnd {
                    overlaps.append((Int(cue.line), Span(start: cue.start, end: min(runEnd, cue.end))))
                }
                runEnd = max(runEnd, cue.end)
            }
        }
        coveredSeconds += runEnd - runStart
        last = runEnd
    }

    func json(track: ThumbnailTrack, problems: [CheckProblem]?) -> JSON {
        func span(_ s: Span) -> JSON { .object([("start", .double(s.start)), ("end", .double(s.end))]) }
        var members: [(String, JSON)] = [
            ("track", .string(track.sourceURL.absoluteString)),
            ("cues", .int(track.cues.count)),
            ("images", .int(track.images.count)),
            ("start", .double(first)),
            ("end", .double(last)),
            ("covered", .double(coveredSeconds)),
            ("gaps", .array(gaps.map(span))),
            (
                "overlaps",
                .array(
                    overlaps.map {
                        .object([
                            ("line", .int($0.line)), ("start", .double($0.span.start)), ("end", .double($0.span.end)),
                        ])
                    })
            ),
            (
                "diagnostics",
                .array(
                    track.diagnostics.map {
                        .object([
                            ("line", .int($0.line)), ("column", .int($0.column)), ("kind", .string($0.kind.rawValue)),
                            ("message", .string($0.message)),
                        ])
                    })
            ),
        ]
        if let problems {
            members.append(
                (
                    "check",
                    .object([
                        ("ok", .bool(problems.isEmpty)),
                        (
                            "problems",
                            .array(
                                problems.map {
                                    .object([
                                        ("line", $0.line.map(JSON.int) ?? .null),
                                        ("image", .string($0.image.absoluteString)), ("message", .string($0.message)),
                                    ])
                                })
                        ),
                    ])
                ))
        }
        return .object(members)
    }

    func text(track: ThumbnailTrack, problems: [CheckProblem]?) -> String {
        var lines = [
            "track        \(track.sourceURL.absoluteString)",
            "cues         \(track.cues.count)",
            "images       \(track.images.count)",
            String(format: "time         %.3f – %.3f s (%.3f s covered)", first, last, coveredSeconds),
            "gaps         \(gaps.count)",
            "overlaps     \(overlaps.count)",
            "diagnostics  \(track.diagnostics.count)",
        ]
        for gap in gaps.prefix(10) { lines.append(String(format: "  gap      %.3f – %.3f s", gap.start, gap.end)) }
        for overlap in overlaps.prefix(10) {
            lines.append(
                String(format: "  overlap  line %d: %.3f – %.3f s", overlap.line, overlap.span.start, overlap.span.end))
        }
        for diagnostic in track.diagnostics.prefix(20) { lines.append("  \(diagnostic)") }
        if let problems {
            lines.append(
                problems.isEmpty
                    ? "check        ok: every image loads and every region fits"
                    : "check        \(problems.count) problem(s)")
            for problem in problems.prefix(20) {
                lines.append(
                    "  " + (problem.line.map { "line \($0): " } ?? "")
                        + "\(problem.image.lastPathComponent): \(problem.message)")
            }
        }
        return lines.joined(separator: "\n")
    }
}
