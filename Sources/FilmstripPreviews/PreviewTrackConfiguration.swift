public import FilmstripFormats
public import FilmstripImaging
public import FilmstripLoading
public import FilmstripMedia
public import FilmstripStreaming
public import Foundation

/// Settings for ``PreviewTrackGenerator``. Every property has a documented default.
public struct PreviewTrackConfiguration: Sendable {
    /// How each thumbnail's frame is chosen.
    public enum Mode: String, Sendable, Hashable, CaseIterable {
        /// The first keyframe at or after the cue's start if it falls inside the cue, else the keyframe before it.
        /// One keyframe decoded per thumbnail: the fast default.
        case keyframe
        /// The exact frame shown at the cue's start (decodes forward from the keyframe before it).
        case accurate
        /// A keyframe inside the cue when there is one (one decode), else the exact frame at the cue's start: every
        /// thumbnail shows a moment of its own cue, at keyframe cost where keyframes are dense enough. For videos
        /// with keyframes further apart than the interval (many encoders default to 10 s), this is what keeps a
        /// scrub preview truthful.
        case auto
    }

    /// The files a generation writes besides the sheets.
    public enum OutputFormat: String, Sendable, Hashable, CaseIterable {
        /// `thumbnails.vtt`: WebVTT with `#xywh=` regions.
        case vtt
        /// `thumbnails.m3u8`: an HLS image media playlist (`EXT-X-IMAGES-ONLY`, `EXT-X-TILES`).
        case hls
        /// `thumbnails.mpd`: a static MPD with one DASH-IF thumbnail-tile AdaptationSet.
        case dash
        /// `thumbnails.bif`: a Roku BIF, one JPEG per thumbnail (whatever the sheets' format) ``PreviewTrackConfiguration/bifWidth`` wide.
        case bif
        /// `thumbnails.json`: the object array players read (`[{url, startTime, endTime, width, height, coords}]`).
        case json
        /// `storyboard.json` and `storyboard.jpg` (`.webp` with WebP sheets): Mux's schema, every tile on one sheet no larger than
        /// ``PreviewTrackConfiguration/maximumSheetSize`` (the tile count adapts to it).
        case storyboard
        /// `iframe-images.m3u8` and `iframe-images.mp4`: an HLS I-frame image sequence (Apple's HLS Authoring
        /// Specification, appendix "I-frame image sequences"): each thumbnail a JPEG sample of fragmented MP4, one
        /// fragment per thumbnail addressed by byte range from an `EXT-X-I-FRAMES-ONLY` playlist; a master lists it
        /// with `EXT-X-I-FRAME-STREAM-INF` and `CODECS="mjpg"`. Read by hls.js 1.7's image I-frame player and Shaka
        /// Player. The images stay JPEG whatever the sheets' format.
        case iframeImages = "iframe-images"
    }

    /// The files to write. Default `[.vtt]`.
    public var formats: Set<OutputFormat> = [.vtt]
    /// Width of the BIF's images in pixels. Default 320.
    public var bifWidth = 320
    /// The largest sheet, for the storyboard's single sheet. Default 4096x4096.
    public var maximumSheetSize = PixelSize(width: 4096, height: 4096)
    /// A fixed number of thumbnails spread over the video instead of one every ``interval``. Default `nil`.
    public var count: Int?
    /// Seconds per thumbnail. Default 10.
    public var interval: Double = 10
    /// The most thumbnails one track may have (default 100,000: a day and more at one a second). A video whose
    /// declared duration would make more (a damaged header can declare years) is refused before anything is
    /// decoded; services that take uploads lower it.
    public var maximumThumbnails: Int = 100_000
    /// Thumbnail width in pixels; the height follows the display aspect ratio (rounded to even). Default 160.
    public var width: Int = 160
    /// More thumbnail widths made in the same pass (one decode per thumbnail serves every width), each written to
    /// `w<width>/` with the same formats (the BIF aside). Default none.
    public var additionalWidths: [Int] = []
    /// Thumbnails per sheet row. Default 10. With ``OutputFormat/hls`` or ``OutputFormat/dash`` the columns are cut
    /// so a sheet is at most 1080 px wide, the widest a Roku device decodes.
    public var columns: Int = 10
    /// Rows per sheet. Default 10.
    public var rows: Int = 10
    /// The sheets' image format: ``ImageFormat/jpeg`` (the default: every player and device reads it) or
    /// ``ImageFormat/webp`` (about a third fewer bytes at the same fidelity, see docs/performance.md; read by
    /// browsers, Shaka Player, dash.js and Apple's platforms, not by Roku). The BIF's images stay JPEG, as Roku
    /// requires, and so does an HLS image playlist's reader on Roku: ``OutputFormat/hls`` with WebP is written only
    /// because it is asked for.
    public var imageFormat: ImageFormat = .jpeg
    /// Quality of the sheets, 1–100, on the format's own scale (libjpeg's or libwebp's). Default 80.
    public var quality: Int = 80
    /// Chroma subsampling of the sheets. Default 4:4:4: at thumbnail sizes, 4:2:0 keeps half the colour
    /// resolution of an already small picture and visibly smears saturated edges; `.s420` makes sheets smaller.
    public var chromaSubsampling: JPEGCodec.ChromaSubsampling = .s444
    /// Frame choice. Default ``Mode/keyframe``.
    public var mode: Mode = .keyframe
    /// In keyframe mode, a black or uniform keyframe gives way to a later keyframe inside the same cue (a fade, a
    /// slate). Default `false`.
    public var skipBlank = false
    /// Parallel decoders (each with its own input). Default: the number of active cores.
    public var workers: Int = ProcessInfo.processInfo.activeProcessorCount
    /// Sheet file names are `<sheetPrefix><N>.<ext>` with N from 1 (`.jpg` or `.webp`). Default `sprite-`.
    public var sheetPrefix = "sprite-"
    /// The track's file name. Default `thumbnails.vtt`.
    public var trackName = "thumbnails.vtt"
    /// With an HLS or DASH input, also write the stream's own manifest with the image tracks added: `master.m3u8`
    /// (an `EXT-X-IMAGE-STREAM-INF` per width; a media playlist is wrapped in a master) for HLS, `manifest.mpd` (an
    /// image AdaptationSet in every Period, one Representation per width) for DASH, every other reference made to
    /// resolve from the output directory. The protocol's format (``OutputFormat/hls`` or ``OutputFormat/dash``) is
    /// written too; other formats are written as plain tracks. Default `false`.
    public var attach = false
    /// Timeouts, size limit, retries and headers for http(s) inputs.
    public var loading = LoadingConfiguration(maximumResponseSize: 16 << 20, requestTimeout: 15, resourceTimeout: 60)
    /// Keys for video protected with Common Encryption, by key id (see
    /// ``FilmstripMedia/FrameExtractorConfiguration/contentKeys``): the owner of the keys makes the previews of
    /// protected content. Held in memory only.
    public var contentKeys = ContentKeys()
    /// A ClearKey licence server for the key ids ``contentKeys`` does not hold.
    public var license: ClearKeyLicense?
    /// The HTTP transport; `nil` uses ``DefaultTransport/shared``.
    public var transport: (any DataLoading)?

    /// The defaults.
    public init() {}

    /// Sheet `n`'s file name (n from 1), or with `n` nil the `$Number$` template.
    func sheetName(_ n: Int?) -> String {
        sheetPrefix + (n.map(String.init) ?? "$Number$") + "." + imageFormat.fileExtension
    }

    /// Encodes packed RGB rows (a sheet) in ``imageFormat``.
    func encodeSheet(_ pixels: UnsafeRawPointer, width: Int, height: Int) throws(ImagingError) -> [UInt8] {
        switch imageFormat {
        case .webp:
            try WebPCodec.encodeRGB(pixels, width: width, height: height, bytesPerRow: width * 3, quality: quality)
        default:
            try JPEGCodec.encodeRGB(
                pixels, width: width, height: height, bytesPerRow: width * 3, quality: quality,
                subsampling: chromaSubsampling)
        }
    }

    /// Encodes packed RGB rows (one thumbnail) as an I-frame image sequence's picture: a baseline JPEG with 4:2:0
    /// chroma, which every `mjpg` reader decodes, at ``quality``.
    func encodeSequenceImage(
        _ pixels: UnsafeRawPointer, width: Int, height: Int, bytesPerRow: Int
    ) throws(ImagingError) -> [UInt8] {
        try JPEGCodec.encodeRGB(
            pixels, width: width, height: height, bytesPerRow: bytesPerRow, quality: quality, subsampling: .s420)
    }

    /// Checks every option is in range; the error says which is not.
    public func validate() throws(MediaError) {
        if let count, !(1...1_000_000).contains(count) {
            throw MediaError(.invalidArgument, "the count must be between 1 and 1,000,000 (got \(count))")
        }
        guard (16...4096).contains(bifWidth) else {
            throw MediaError(.invalidArgument, "the BIF width must be between 16 and 4096 pixels (got \(bifWidth))")
        }
        guard maximumSheetSize.width >= width, maximumSheetSize.height >= 16 else {
            throw MediaError(.invalidArgument, "the maximum sheet size must hold at least one thumbnail")
        }
        guard interval.isFinite, interval >= 0.04 else {
            throw MediaError(.invalidArgument, "the interval must be at least 0.04 s (got \(interval))")
        }
        for extra in additionalWidths where !(16...4096).contains(extra) {
            throw MediaError(.invalidArgument, "every width must be between 16 and 4096 pixels (got \(extra))")
        }
        guard (16...4096).contains(width) else {
            throw MediaError(.invalidArgument, "the width must be between 16 and 4096 pixels (got \(width))")
        }
        guard columns > 0, rows > 0, columns * width <= 16384 else {
            throw MediaError(
                .invalidArgument, "a sheet must have at least one column and row and be at most 16384 pixels wide")
        }
        guard (1...100).contains(quality) else {
            throw MediaError(.invalidArgument, "the quality must be between 1 and 100 (got \(quality))")
        }
        guard imageFormat == .jpeg || imageFormat == .webp else {
            throw MediaError(.invalidArgument, "sheets are JPEG or WebP (got \(imageFormat.rawValue))")
        }
    }
}

/// What ``PreviewTrackGenerator/generate(from:to:options:progress:)`` made.
public struct PreviewTrackSummary: Sendable, Hashable {
    /// Number of thumbnails (cues).
    public var thumbnails: Int
    /// Number of sheets written.
    public var sheets: Int
    /// Duration of the video in seconds.
    public var duration: Double
    /// Wall-clock seconds the generation took.
    public var seconds: Double
    /// Size of one thumbnail.
    public var tileSize: PixelSize
    /// The WebVTT track.
    public var trackURL: URL
    /// The sheets, in order.
    public var sheetURLs: [URL]
    /// Bytes read from the input (over HTTP: received).
    public var bytesRead: Int
    /// Frames decoded.
    public var decodedFrames: Int
    /// Every file written, sheets and tracks, in the order written.
    public var files: [URL] = []
    /// The `EXT-X-IMAGE-STREAM-INF` line that adds `thumbnails.m3u8` to an existing master (with `.hls`).
    public var imageStreamInf: String?
    /// The I-frame image sequence as a master describes it (with `.iframeImages`).
    public var iFrameImageStream: ImageIFrameSequence.Stream?
    /// The `EXT-X-I-FRAME-STREAM-INF` line that adds `iframe-images.m3u8` to an existing master (with
    /// `.iframeImages`).
    public var iFrameStreamInf: String? { iFrameImageStream?.line(uri: ImageIFrameSequence.playlistName) }
    /// The image AdaptationSet to paste into an existing MPD's Period (with `.dash`).
    public var dashAdaptationSet: String?
    /// The summaries of ``PreviewTrackConfiguration/additionalWidths``, in order.
    public var otherWidths: [PreviewTrackSummary] = []
    /// Where each thumbnail is: times, sheets and cells.
    public var layout: PreviewTrackLayout?
    /// Each sheet's size in bytes, in order.
    public var sheetBytes: [Int] = []
    /// The stream's manifest with the image tracks added (``PreviewTrackConfiguration/attach``).
    public var attachedManifest: URL?
}
