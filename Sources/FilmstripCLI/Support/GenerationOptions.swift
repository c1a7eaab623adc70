import ArgumentParser
import Filmstrip

/// The options of `generate` that shape the outputs, shared with `catalog generate`.
struct GenerationOptions: ParsableArguments {
    @Option(help: "Seconds per thumbnail (default 10; 2 with --live).")
    var interval: Double?

    @Option(help: "A fixed number of thumbnails over the video (instead of --interval).")
    var count: Int?

    @Option(
        name: .customLong("max-thumbnails"),
        help: "Refuse a video whose declared duration would make more thumbnails than this (a damaged header).")
    var maxThumbnails: Int = 100_000

    @Option(
        help: "Comma-separated outputs: vtt, hls, dash, bif, json, storyboard, iframe-images.",
        transform: { text in
            var formats = Set<PreviewTrackConfiguration.OutputFormat>()
            for name in text.split(separator: ",") {
                guard let format = PreviewTrackConfiguration.OutputFormat(rawValue: String(name)) else {
                    throw ValidationError("--formats takes vtt, hls, dash, bif, json, storyboard and iframe-images")
                }
                formats.insert(format)
            }
            return formats
        })
    var formats: Set<PreviewTrackConfiguration.OutputFormat> = [.vtt]

    @Option(name: .customLong("bif-width"), help: "Width of the BIF's images.")
    var bifWidth: Int = 320

    @Option(
        name: .customLong("max-sheet-size"), help: "The largest sheet, WxH (the storyboard's one sheet fits in it).",
        transform: { text in
            guard let size = PixelSize(text) else { throw ValidationError("--max-sheet-size must be WxH") }
            return size
        })
    var maxSheetSize = PixelSize(width: 4096, height: 4096)

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

    @Option(
        name: .customLong("image-format"),
        help: "Sheet format: jpeg, or webp (fewer bytes; not read by Roku: the BIF stays JPEG).",
        transform: { text in
            switch text.lowercased() {
            case "jpeg", "jpg": return ImageFormat.jpeg
            case "webp": return ImageFormat.webp
            default: throw ValidationError("--image-format must be jpeg or webp")
            }
        })
    var imageFormat: ImageFormat = .jpeg

    @Option(help: "Sheet quality, 1-100 (libjpeg's or libwebp's scale).")
    var quality: Int = 80

    @Option(help: ArgumentHelp(generationModeHelp), transform: generationMode)
    var mode: PreviewTrackConfiguration.Mode = .keyframe

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

    /// The library's options with these set.
    func previewOptions() throws -> PreviewTrackConfiguration {
        var options = PreviewTrackConfiguration()
        options.interval = interval ?? 10
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
        options.imageFormat = imageFormat
        options.quality = quality
        options.mode = mode
        options.skipBlank = skipBlank
        options.chromaSubsampling = chroma
        if let workers { options.workers = workers }
        return options
    }

    /// What the user should know about these options: WebP sheets where Roku reads JPEG only. `hls`: whether an
    /// HLS image playlist is written (asked for, or added by `--attach` to an HLS stream).
    func notes(hls: Bool) -> [String] {
        guard imageFormat == .webp else { return [] }
        var notes: [String] = []
        if formats.contains(.bif) { notes.append("note: the BIF's images stay JPEG (Roku reads JPEG only)") }
        if hls {
            notes.append(
                "warning: an HLS image playlist of WebP sheets is not read by Roku devices (JPEG only); Shaka "
                    + "Player and browsers read it")
        }
        return notes
    }
}

/// The preview options of the commands that make tracks for a page or a library on demand (`page`, `serve`): a
/// preview every 2 s in auto mode by default, for scrubbing, where `generate`'s defaults suit a catalog.
struct OnDemandPreviewOptions: ParsableArguments {
    @Option(help: "Seconds per thumbnail of generated tracks.")
    var interval: Double = 2

    @Option(
        help: ArgumentHelp(generationModeHelp + " Default auto: every preview shows a moment of its own cue."),
        transform: generationMode)
    var mode: PreviewTrackConfiguration.Mode = .auto

    func validate() throws {
        guard interval > 0, interval.isFinite else { throw ValidationError("--interval must be positive") }
    }

    /// `options` with these set.
    func applied(to options: PreviewTrackConfiguration) -> PreviewTrackConfiguration {
        var options = options
        options.interval = interval
        options.mode = mode
        return options
    }
}
