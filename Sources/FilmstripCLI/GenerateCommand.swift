import ArgumentParser
import Filmstrip
import Foundation

struct GenerateCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "generate",
        abstract: "Generate a preview track (JPEG or WebP sprite sheets and track files in every format) from a video.",
        discussion: """
            Writes DIR/sprite-N.jpg (N from 1; .webp with --image-format webp) and, per --formats (default vtt): thumbnails.vtt (WebVTT with \
            #xywh= regions), thumbnails.m3u8 (an HLS image playlist), thumbnails.mpd (a DASH thumbnail-tile \
            AdaptationSet), thumbnails.bif (Roku BIF, --bif-width px), thumbnails.json (the object array) and \
            storyboard.json with storyboard.jpg (Mux's schema, all tiles on one sheet within --max-sheet-size). \
            Track files are written last, each atomically. Cues are contiguous, [k*S, (k+1)*S), and the last one \
            ends at the video's duration. The input may be a file, an http(s) URL, an HLS playlist or an MPD. \
            With --json the summary lists every file written, the EXT-X-IMAGE-STREAM-INF line to paste into a \
            master playlist and the AdaptationSet to paste into an MPD.

            With --attach (an HLS master or media playlist, or a static MPD, local or http) Filmstrip does the \
            pasting: it also writes DIR/master.m3u8 (HLS input: the stream's master with an \
            EXT-X-IMAGE-STREAM-INF per width; a media playlist gets a master that wraps it) or DIR/manifest.mpd \
            (DASH input: an image AdaptationSet in every Period, one Representation per width), every other URI \
            rewritten to resolve from DIR (relative for a local stream, absolute for a remote one). Serve DIR (for \
            a local stream outside it, a folder that holds both) and play that manifest. The protocol's own format is added to --formats; the others are written as plain \
            tracks. A live stream is refused.

            Examples:
              filmstrip generate movie.mp4 --output thumbs --interval 5 --formats vtt,hls,dash,bif,json --json
              filmstrip generate stream/manifest.mpd --output thumbs --interval 2 --attach

            With --live (a live HLS playlist or dynamic MPD) the run follows the stream and publishes a rolling \
            track until the stream ends: immutable sheets of --sheet-span seconds (default columns x rows x \
            interval; the interval is 2 s), a live thumbnails.m3u8 (no EXT-X-ENDLIST), thumbnails.vtt and \
            thumbnails.json listing the sheets in the --window (default: the source's DVR window). Each sheet is \
            written before the tracks name it; sheets that leave the window are deleted a window later. Run it \
            again on the same DIR to resume; SIGTERM stops it after what is complete is published. With --json, \
            one line per publication. An input that is not live is refused (exit 2).
              filmstrip generate https://origin/live/index.m3u8 --live --output thumbs --formats vtt,hls --sheet-span 10
            """
    )

    @Argument(help: "Path or URL of the video.")
    var video: String

    @Option(name: .shortAndLong, help: "Directory to write the sheets and the track to.")
    var output: String

    @OptionGroup var generation: GenerationOptions

    @Flag(help: "Also write the stream's own manifest with the image tracks added (DIR/master.m3u8, DIR/manifest.mpd).")
    var attach = false

    @Flag(help: "Print a JSON summary on standard output.")
    var json = false

    @OptionGroup var network: NetworkOptions

    @OptionGroup var keys: KeyOptions

    @Flag(help: "Follow a live HLS playlist or dynamic MPD and publish a rolling track until the stream ends.")
    var live = false

    @Option(help: "With --live: seconds of track kept behind the live edge (default: the source's DVR window).")
    var window: Double?

    @Option(
        help:
            "With --live: seconds of media per sheet, a whole number of intervals (default columns x rows x interval).")
    var sheetSpan: Double?

    @Flag(help: "With --live: start at the oldest time in the source's window instead of the sheet at the live edge.")
    var fromStart = false

    func validate() throws {
        if !live, window != nil || sheetSpan != nil || fromStart {
            throw ValidationError("--window, --sheet-span and --from-start go with --live")
        }
        if live, attach { throw ValidationError("--attach makes a VOD stream's manifest; it does not go with --live") }
        if live, generation.skipBlank || generation.workers != nil {
            // A live run reads each segment as it comes, one at a time, and takes the tile's own keyframe.
            throw ValidationError("--skip-blank and --workers do not go with --live")
        }
    }

    func run() async throws {
        if live { return try await runLive() }
        var options = try generation.previewOptions()
        options.loading = network.applied(to: options.loading)
        options.contentKeys = keys.keys
        options.license = keys.license(policy: network.policy)
        options.attach = attach
        let directory = URL(fileURLWithPath: output, isDirectory: true).standardizedFileURL
        let bar = ProgressBar(label: "thumbnails")
        let summary: PreviewTrackSummary
        do {
            summary = try await PreviewTrackGenerator.generate(
                from: resourceURL(video), to: directory, options: options
            ) { done, total in bar.update(done, of: total) }
        } catch {
            throw fail(error)
        }
        let wroteHLS = summary.files.contains { $0.lastPathComponent == "thumbnails.m3u8" }
        for note in generation.notes(hls: wroteHLS) { printError(note) }
        if json {
            print(
                JSON.object([
                    ("thumbnails", .int(summary.thumbnails)),
                    ("sheets", .int(summary.sheets)),
                    ("duration", .double(summary.duration)),
                    ("seconds", .double((summary.seconds * 1000).rounded() / 1000)),
                    ("track", .string(summary.trackURL.path)),
                    ("tile", .object([("w", .int(summary.tileSize.width)), ("h", .int(summary.tileSize.height))])),
                    ("bytes_read", .int(summary.bytesRead)),
                    ("files", .array(summary.files.map { JSON.string($0.path) })),
                    ("image_stream_inf", summary.imageStreamInf.map(JSON.string) ?? .null),
                    ("iframe_stream_inf", summary.iFrameStreamInf.map(JSON.string) ?? .null),
                    ("dash_adaptation_set", summary.dashAdaptationSet.map(JSON.string) ?? .null),
                    ("attached", summary.attachedManifest.map { JSON.string($0.path) } ?? .null),
                    (
                        "other_widths",
                        .array(
                            summary.otherWidths.map {
                                .object([
                                    ("width", .int($0.tileSize.width)), ("track", .string($0.trackURL.path)),
                                    ("files", .array($0.files.map { JSON.string($0.path) })),
                                ])
                            })
                    ),
                ]).text)
        } else {
            let sheets = summary.sheets == 1 ? "1 sheet" : "\(summary.sheets) sheets"
            print(
                "\(summary.thumbnails) thumbnails (\(summary.tileSize)) on \(sheets) and \(summary.trackURL.path) "
                    + String(format: "in %.2f s", summary.seconds))
            if let attached = summary.attachedManifest {
                print("the stream with its previews: \(attached.path)")
                let source = resourceURL(video)
                if source.isFileURL, let common = Self.commonFolder(source.deletingLastPathComponent(), directory),
                    common != directory.path
                {
                    print("(it names the stream's files by relative paths: serve \(common), which holds both)")
                }
            }
        }
    }

    /// The deepest folder that holds both `a` and `b`.
    static func commonFolder(_ a: URL, _ b: URL) -> String? {
        let x = a.standardizedFileURL.resolvingSymlinksInPath().pathComponents
        let y = b.standardizedFileURL.resolvingSymlinksInPath().pathComponents
        let shared = zip(x, y).prefix { $0 == $1 }.map(\.0)
        guard !shared.isEmpty else { return nil }
        return NSString.path(withComponents: shared)
    }
}
