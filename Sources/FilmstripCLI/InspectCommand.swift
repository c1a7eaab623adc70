import ArgumentParser
import Filmstrip
import Foundation

struct InspectCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "inspect",
        abstract: "Summarise a thumbnail track, an HLS playlist or DASH MPD, or a media file.",
        discussion: """
            For a thumbnail track in any format (WebVTT, an HLS image playlist, an MPD's thumbnail tiles, BIF, \
            storyboard JSON; told by content): its format, cues, covered time, gaps, overlaps, images and \
            diagnostics. --cues lists every cue (id, start, end, image, region). --check fetches every image and \
            reports what players trip over: images that contradict the track (a region outside its image, a layout \
            that does not fit the sheet; exit status 1) and warnings (an EXTINF above the target duration, tiles past \
            a segment's end, gaps and overlaps, a layout that disagrees with the sheet's size, a sheet over 1080 px \
            wide, JSON served without application/json; exit status 0).

            For an HLS master or media playlist or a DASH MPD (.m3u8, .mpd, or a local file that starts like one): \
            periods, tracks, renditions (codecs, resolution, bandwidth, language) with their segment counts and \
            durations (media playlists and segment indexes are loaded), and the live window.

            For a media file (a video, or audio alone): its container, duration, video (codec, size, size shown, \
            frame rate, turns) and audio streams (codec, channels, rate, language); a file of audio alone says \
            "audio only". A file whose video no decoder reads exits 2 with a message naming its codec.

            Example:
              filmstrip inspect https://cdn.example.com/stream/manifest.mpd --json
            """
    )

    @Argument(help: "Path or URL of a WebVTT thumbnail track, an HLS playlist, a DASH MPD or a media file.")
    var track: String

    @Flag(help: "Print one JSON object on standard output.")
    var json = false

    @Flag(help: "Fetch every image and verify that every region lies inside its image.")
    var check = false

    @Flag(help: "Skip malformed cues instead of failing.")
    var lenient = false

    @OptionGroup var cache: CacheOptions

    @OptionGroup var network: NetworkOptions

    @Flag(help: "Use only the disk cache.")
    var offline = false

    @Flag(help: "With --json, list every cue (id, start, end, image, region) instead of counting them.")
    var cues = false

    func run() async throws {
        let url = resourceURL(track)
        if !cues, !check, Self.isLocalMedia(url) {
            try inspectMedia(url)
            return
        }
        if !cues, !check, ManifestDetection.isManifest(url) {
            let report: PresentationReport
            do {
                report = try await PresentationReport.load(url, policy: network.policy)
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
        configuration.loading = network.applied(to: configuration.loading)
        let thumbnails = TrackThumbnails(configuration: configuration)
        do {
            try await thumbnails.load(track: url)
        } catch let error as ThumbnailsError where !url.isFileURL && !cues && !check && error.isNotATrack {
            // A remote video or audio file: what it holds.
            try inspectMedia(url)
            return
        } catch {
            throw fail(error)
        }
        guard let parsed = thumbnails.track else { throw fail(ThumbnailsError(.notLoaded, "the track did not load")) }
        let summary = TrackSummary(parsed)
        var findings: [TrackFinding]?
        if check {
            var found = await thumbnails.check()
            if parsed.format == .json, let warning = await Self.contentTypeFinding(url, policy: network.policy) {
                found.append(warning)
            }
            findings = found
        }
        if json {
            print(summary.json(track: parsed, findings: findings, listCues: cues).text)
        } else {
            print(summary.text(track: parsed, findings: findings, listCues: cues))
        }
        if findings?.contains(where: { $0.severity == .error }) == true { throw ExitStatus.notFound }
    }

    /// Storyboard JSON served without a JSON content type (some players refuse it).
    private static func contentTypeFinding(_ url: URL, policy: AddressPolicy) async -> TrackFinding? {
        guard url.scheme == "http" || url.scheme == "https",
            let response = try? await DefaultTransport.shared.load(
                url, configuration: LoadingConfiguration(addressPolicy: policy))
        else { return nil }
        let type = response.headers["content-type"] ?? "(none)"
        guard !type.lowercased().contains("json") else { return nil }
        return TrackFinding(.warning, "the JSON is served as \(type), not application/json", image: nil)
    }
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

    func json(track: ThumbnailTrack, findings: [TrackFinding]?, listCues: Bool) -> JSON {
        func span(_ s: Span) -> JSON { .object([("start", .double(s.start)), ("end", .double(s.end))]) }
        var members: [(String, JSON)] = [
            ("track", .string(track.sourceURL.absoluteString)),
            ("format", .string(track.format.rawValue)),
            (
                "cues",
                listCues
                    ? .array(track.cues.enumerated().map { Self.cueJSON($0.element, index: $0.offset, in: track) })
                    : .int(track.cues.count)
            ),
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
        func entry(_ f: TrackFinding) -> JSON {
            .object([
                ("severity", .string(f.severity.rawValue)), ("location", f.location.map(JSON.string) ?? .null),
                ("image", f.image.map { JSON.string($0.absoluteString) } ?? .null), ("message", .string(f.message)),
            ])
        }
        // What reading the track found, with or without --check.
        members.append(("findings", .array(track.findings.map(entry))))
        if let findings {
            let errors = findings.filter { $0.severity == .error }
            members.append(
                (
                    "check",
                    .object([
                        ("ok", .bool(errors.isEmpty)), ("problems", .array(errors.map(entry))),
                        ("warnings", .array(findings.filter { $0.severity == .warning }.map(entry))),
                    ])
                ))
        }
        return .object(members)
    }

    /// One cue as JSON: id, start, end, image (without fragment) and region (a pixel region, a tile, or null).
    static func cueJSON(_ cue: ThumbnailCue, index: Int, in track: ThumbnailTrack) -> JSON {
        var region: JSON = .null
        if let r = cue.region {
            region = .object(
                [
                    ("x", .int(Int(r.x))), ("y", .int(Int(r.y))), ("w", .int(Int(r.width))), ("h", .int(Int(r.height))),
                ] + (r.unit == .percent ? [("unit", .string("percent"))] : []))
        } else if let tile = cue.tile {
            region = .object([
                ("column", .int(Int(tile.column))), ("row", .int(Int(tile.row))), ("columns", .int(Int(tile.columns))),
                ("rows", .int(Int(tile.rows))),
            ])
        }
        return .object([
            // The id as a browser reports it ("" when the cue has none); the position is a field of its own.
            ("index", .int(index + 1)), ("id", .string(cue.id)), ("start", .double(cue.start)),
            ("end", .double(cue.end)), ("image", .string(track.imageURL(of: cue).absoluteString)), ("region", region),
        ])
    }

    func text(track: ThumbnailTrack, findings: [TrackFinding]?, listCues: Bool) -> String {
        var lines = [
            "track        \(track.sourceURL.absoluteString)",
            "format       \(track.format.rawValue)",
            "cues         \(track.cues.count)",
            "images       \(track.images.count)",
            String(format: "time         %.3f – %.3f s (%.3f s covered)", first, last, coveredSeconds),
            "gaps         \(gaps.count)",
            "overlaps     \(overlaps.count)",
            "diagnostics  \(track.diagnostics.count)",
        ]
        // What reading the track found (with --check, the check lists them with the rest).
        if findings == nil, !track.findings.isEmpty {
            lines.append("findings     \(track.findings.count)")
            for finding in track.findings.prefix(40) { lines.append("  \(finding)") }
        }
        for gap in gaps.prefix(10) { lines.append(String(format: "  gap      %.3f – %.3f s", gap.start, gap.end)) }
        for overlap in overlaps.prefix(10) {
            lines.append(
                String(format: "  overlap  line %d: %.3f – %.3f s", overlap.line, overlap.span.start, overlap.span.end))
        }
        for diagnostic in track.diagnostics.prefix(20) { lines.append("  \(diagnostic)") }
        if listCues {
            for (k, cue) in track.cues.enumerated() {
                let place =
                    cue.region.map { "#xywh=\($0.x),\($0.y),\($0.width),\($0.height)" }
                    ?? cue.tile.map { " tile \($0.column),\($0.row) of \($0.columns)x\($0.rows)" } ?? ""
                lines.append(
                    String(format: "  %5d  %.3f – %.3f s  ", k + 1, cue.start, cue.end)
                        + (cue.identifier.map { "\"\($0)\"  " } ?? "")
                        + track.imageURL(of: cue).lastPathComponent + place)
            }
        }
        if let findings {
            let errors = findings.filter { $0.severity == .error }.count
            lines.append(
                findings.isEmpty
                    ? "check        ok: every image loads and every region fits"
                    : "check        \(errors) problem(s), \(findings.count - errors) warning(s)")
            for finding in findings.prefix(40) {
                lines.append("  \(finding)" + (finding.image.map { " (\($0.lastPathComponent))" } ?? ""))
            }
        }
        return lines.joined(separator: "\n")
    }
}
