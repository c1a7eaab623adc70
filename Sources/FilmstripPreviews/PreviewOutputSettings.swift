import FilmstripFormats
import FilmstripImaging
import FilmstripLoading
public import FilmstripMedia
import Foundation

/// The generation settings that change what a track's files hold, in one canonical record: what every cache of
/// generated tracks keys them by (``contentKey(of:)``: a catalog's items, `serve`'s generated tracks), and what a
/// catalog keeps in its `catalog.json` so that `catalog status` and `catalog index` find the same keys.
///
/// Settings that change how outputs are made but not their bytes (parallel decoders, the thumbnail bound, the
/// network) are left out: changing them does not regenerate anything.
public struct PreviewOutputSettings: Sendable, Hashable, Codable {
    /// Bumped when the same settings would give different bytes (a change to the generator's output).
    public static let outputVersion = 1

    /// ``outputVersion`` when these settings were written.
    public var outputVersion: Int
    /// The track files written, sorted (``PreviewTrackConfiguration/OutputFormat`` raw values).
    public var formats: [String]
    /// Seconds per thumbnail; 0 when a count is set.
    public var interval: Double
    /// A fixed number of thumbnails, if set.
    public var count: Int?
    /// Thumbnail width.
    public var width: Int
    /// More widths, sorted.
    public var extraWidths: [Int]
    /// Thumbnails per sheet row.
    public var columns: Int
    /// Rows per sheet.
    public var rows: Int
    /// The sheets' image format when it is not JPEG (`webp`); `nil` for JPEG, so catalogs made before WebP keep
    /// their keys.
    public var imageFormat: String?
    /// Sheet quality, on the format's scale.
    public var quality: Int
    /// `444` or `420`.
    public var chroma: String
    /// `keyframe`, `accurate` or `auto`.
    public var mode: String
    /// Whether blank keyframes are passed over.
    public var skipBlank: Bool
    /// The BIF's image width.
    public var bifWidth: Int
    /// The largest sheet, `WxH`.
    public var maximumSheetSize: String
    /// The sheets' and the WebVTT track's names when they are not the defaults (`sprite-`, `thumbnails.vtt`);
    /// `nil` for the defaults, so keys made before names were part of them stay the same.
    public var sheetPrefix: String?
    public var trackName: String?

    /// The settings of `options`.
    public init(_ options: PreviewTrackConfiguration) {
        outputVersion = Self.outputVersion
        formats = options.formats.map(\.rawValue).sorted()
        // With a count, the interval is not read: it must not change the key.
        interval = options.count == nil ? options.interval : 0
        count = options.count
        width = options.width
        extraWidths = Array(Set(options.additionalWidths)).sorted()
        columns = options.columns
        rows = options.rows
        imageFormat = options.imageFormat == .jpeg ? nil : options.imageFormat.rawValue
        quality = options.quality
        chroma = options.chromaSubsampling == .s420 ? "420" : options.chromaSubsampling == .s422 ? "422" : "444"
        mode = options.mode.rawValue
        skipBlank = options.skipBlank
        bifWidth = options.bifWidth
        maximumSheetSize = options.maximumSheetSize.description
        let defaults = PreviewTrackConfiguration()
        sheetPrefix = options.sheetPrefix == defaults.sheetPrefix ? nil : options.sheetPrefix
        trackName = options.trackName == defaults.trackName ? nil : options.trackName
    }

    /// `options` with these settings.
    public func applied(to options: PreviewTrackConfiguration) throws(MediaError) -> PreviewTrackConfiguration {
        var options = options
        var formats = Set<PreviewTrackConfiguration.OutputFormat>()
        for name in self.formats {
            guard let format = PreviewTrackConfiguration.OutputFormat(rawValue: name) else {
                throw MediaError(.invalidArgument, "unknown output format \"\(name)\" in the settings")
            }
            formats.insert(format)
        }
        guard let mode = PreviewTrackConfiguration.Mode(rawValue: mode), let size = PixelSize(maximumSheetSize),
            let format = ImageFormat(rawValue: imageFormat ?? "jpeg")
        else {
            throw MediaError(.invalidArgument, "unreadable mode, sheet size or image format in the settings")
        }
        options.imageFormat = format
        options.formats = formats
        if count == nil { options.interval = interval }
        options.count = count
        options.width = width
        options.additionalWidths = extraWidths
        options.columns = columns
        options.rows = rows
        options.quality = quality
        options.chromaSubsampling = chroma == "420" ? .s420 : chroma == "422" ? .s422 : .s444
        options.mode = mode
        options.skipBlank = skipBlank
        options.bifWidth = bifWidth
        options.maximumSheetSize = size
        let defaults = PreviewTrackConfiguration()
        options.sheetPrefix = sheetPrefix ?? defaults.sheetPrefix
        options.trackName = trackName ?? defaults.trackName
        return options
    }

    /// The key of what `identity` (a file's path, size and time, a URL's validators: whatever names one version of
    /// a video) gives under these settings: SHA-256 over both, as 32 hex digits (128 bits). A changed video or
    /// changed settings give a new key; the same ones give the same key in any process on any node.
    public func contentKey(of identity: String) -> String {
        Digest.sha256Hex("filmstrip-item\n" + identity + "\n--\n" + canonical, bytes: 16)
    }

    /// One line per setting, in a fixed order: what the content key hashes.
    var canonical: String {
        [
            "filmstrip-catalog-output \(outputVersion)", "formats \(formats.joined(separator: ","))",
            "interval \(interval)", "count \(count.map(String.init) ?? "-")", "width \(width)",
            "extra-widths \(extraWidths.map(String.init).joined(separator: ","))", "columns \(columns)", "rows \(rows)",
            "quality \(quality)", "chroma \(chroma)", "mode \(mode)", "skip-blank \(skipBlank)",
            "bif-width \(bifWidth)",
            "max-sheet-size \(maximumSheetSize)",
        ].joined(separator: "\n") + (imageFormat.map { "\nimage-format \($0)" } ?? "")
            + (sheetPrefix.map { "\nsheet-prefix \($0)" } ?? "") + (trackName.map { "\ntrack-name \($0)" } ?? "")
    }
}
