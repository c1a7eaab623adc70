import ArgumentParser
import Filmstrip
import Foundation

struct GenerateCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "generate",
        abstract: "Generate a preview track (JPEG sprite sheets and track files in every format) from a video.",
        discussion: """
            Writes DIR/sprite-N.jpg (N from 1) and, per --formats (default vtt): thumbnails.vtt (WebVTT with \
            #xywh= regions), thumbnails.m3u8 (an HLS image playlist), thumbnails.mpd (a DASH thumbnail-tile \
            AdaptationSet), thumbnails.bif (Roku BIF, --bif-width px), thumbnails.json (the object array) and \
            storyboard.json with storyboard.jpg (Mux's schema, all tiles on one sheet within --max-sheet-size). \
            Track files are written last, each atomically. Cues are contiguous, [k*S, (k+1)*S), and the last one \
            ends at the video's duration. The input may be a file, an http(s) URL, an HLS playlist or an MPD. \
            With --json the summary lists every file written, the EXT-X-IMAGE-STREAM-INF line to paste into a \
            master playlist and the AdaptationSet to paste into an MPD.

            Example:
              filmstrip generate movie.mp4 --output thumbs --interval 5 --formats vtt,hls,dash,bif,json --json
            """
    )

    @Argument(help: "Path or URL of the video.")
    var video: String

    @Option(name: .shortAndLong, help: "Directory to write the sheets and the track to.")
    var output: String

    @Option(help: "Seconds per thumbnail.")
    var interval: Double = 10

    @Option(help: "A fixed number of thumbnails over the video (instead of --interval).")
    var count: Int?

    @Option(
        name: .customLong("max-thumbnails"),
        help: "Refuse a video whose declared duration would make more thumbnails than this (a damaged header).")
    var maxThumbnails: Int = 100_000

    @Option(
        help: "Comma-separated outputs: vtt, hls, dash, bif, json, storyboard.",
        transform: { text in
            var formats = Set<PreviewTrackOptions.OutputFormat>()
            for name in text.split(separator: ",") {
                guard let format = PreviewTrackOptions.OutputFormat(rawValue: String(name)) else {
                    throw ValidationError("--formats takes vtt, hls, dash, bif, json and storyboard")
                }
                formats.insert(format)
            }
            return formats
        })
    var formats: Set<PreviewTrackOptions.OutputFormat> = [.vtt]

    @Option(name: .customLong("bif-width"), help: "Width of the BIF's images.")
    var bifWidth: Int = 320

    @Option(
        name: .customLong("max-sheet-size"), help: "The largest sheet, WxH (the storyboard's one sheet fits in it).",
        transform: { text in
            guard let size = ImageSize(text) else { throw ValidationError("--max-sheet-size must be WxH") }
            return size
        })
    var maxSheetSize = ImageSize(width: 4096, height: 4096)

    @Option(help: "Thumbnail width in pixels (the height follows the aspect ratio).")
    var width: Int = 160

    @Option(
        name: .customLong("extra-widths"),
        help: "More widths made in the same pass (comma-separated), each into DIR/w<width>/ with the same formats.",
        transform: { text in
            try text.split(separator: ",").map { part in
                guard let width = Int(part) else { throw ValidationError("--extra-widths takes widths like 240,320") }
                return width
            }
        })
    var extraWidths: [Int] = []

    @Option(help: "Thumbnails per sheet row.")
    var columns: Int = 10

    @Option(help: "Rows per sheet.")
    var rows: Int = 10

    @Option(help: "JPEG quality, 1-100.")
    var quality: Int = 80

    @Option(help: ArgumentHelp(generationModeHelp), transform: generationMode)
    var mode: PreviewTrackOptions.Mode = .keyframe

    @Option(
        help: "Chroma subsampling of the sheets: 444 (sharper colour) or 420 (smaller files).",
        transform: { text in
            switch text {
            case "444": return JPEGCodec.ChromaSubsampling.s444
            case "420": return JPEGCodec.ChromaSubsampling.s420
            default: throw ValidationError("--chroma must be 444 or 420")
            }
        })
    var chroma: JPEGCodec.ChromaSubsampling = .s444

    @Flag(name: .customLong("skip-blank"), help: "Prefer a later keyframe inside the cue to a black or uniform one.")
    var skipBlank = false

    @Option(help: "Parallel decoders (default: one per core).")
    var workers: Int?

    @Flag(help: "Print a JSON summary on standard output.")
    var json = false

    @OptionGroup var network: NetworkOptions

    func run() async throws {
        var options = PreviewTrackOptions()
        options.interval = interval
        options.count = count
        guard maxThumbnails > 0 else { throw ValidationError("--max-thumbnails must be positive") }
        options.maximumThumbnails = maxThumbnails
        options.formats = formats
        options.bifWidth = bifWidth
        options.maximumSheetSize = maxSheetSize
        options.width = width
        options.additionalWidths = extraWidths
        options.columns = columns
        options.rows = rows
        options.quality = quality
        options.mode = mode
        options.skipBlank = skipBlank
        options.chromaSubsampling = chroma
        if let workers { options.workers = workers }
        options.loading = network.applied(to: options.loading)
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
                    ("dash_adaptation_set", summary.dashAdaptationSet.map(JSON.string) ?? .null),
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
        }
    }
}
