import FilmstripFormats
import FilmstripImaging
import FilmstripMedia
import Foundation

/// What a live run has published, kept in `DIR/.filmstrip-live.json` (written atomically after each sheet, before
/// the track files), so a run started again resumes where the last one stopped.
struct LiveTrackState: Codable, Hashable {
    /// The source, as given.
    var source: String
    /// The settings the track is cut with; a run with others refuses the folder.
    var settings: Settings
    /// How the source's segments map onto the track's timeline.
    var timeBase: LiveTimeBase?
    /// The tile size, from the first frame decoded.
    var tileWidth: Int?
    var tileHeight: Int?
    /// The sheets in the window, oldest first, numbers consecutive.
    var sheets: [LiveSheet] = []
    /// Start (ms) of the next tile to make: the end of the newest published sheet.
    var next: Int64?
    /// Where the tiles are counted from (ms): tile k starts at origin + k · interval, sheet n at
    /// origin + (n - 1) · span. With program dates, the first segment's date the first run saw, so that tiles fall on
    /// the video's segments and the track starts with the video (a player that reads an ended stream as VOD starts
    /// every playlist at its first entry); else 0, the timeline's own zero.
    var origin: Int64?
    /// The window, seconds (resolved from the source's when not given).
    var window: Double?
    /// Sheets that left the window, kept on disk until players that read an older playlist are done with them.
    var retired: [Retired] = []
    /// The source ended and the tracks are VOD tracks.
    var ended = false
    /// The wall-clock time of the timeline's 0 (the DASH image track's `availabilityStartTime`).
    var availabilityStart: Date?
    /// The start of the source's Period that holds the track, seconds (a DASH source; for the AdaptationSet to add
    /// to its MPD).
    var periodStart: Double?

    struct Settings: Codable, Hashable {
        var width: Int
        var columns: Int
        var rows: Int
        var interval: Int64
        var span: Int64
        var format: String
        var quality: Int
        var mode: String
        /// The sheets' file-name prefix (the DASH template names the sheets by it).
        var prefix: String
        /// The formats written (with DASH, every sheet has the layout's full size, and gap sheets have a file).
        var formats: [String]
    }

    struct Retired: Codable, Hashable {
        var name: String
        /// Deleted once the live edge passes this time (ms).
        var after: Int64
    }

    static let fileName = ".filmstrip-live.json"

    static func read(in directory: URL) throws(MediaError) -> LiveTrackState? {
        let url = directory.appendingPathComponent(fileName)
        guard FileManager.default.fileExists(atPath: url.path) else { return nil }
        do {
            return try JSONDecoder().decode(LiveTrackState.self, from: Data(contentsOf: url))
        } catch {
            throw MediaError(.invalidArgument, "cannot read the live run's state \(url.path)", underlying: error)
        }
    }

    func write(in directory: URL) throws(MediaError) {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        do {
            try encoder.encode(self).write(to: directory.appendingPathComponent(Self.fileName), options: .atomic)
        } catch {
            throw MediaError(.outputFailed, "cannot write the live run's state in \(directory.path)", underlying: error)
        }
    }

    func layout(span: Int64, columns: Int) -> LivePreviewLayout {
        LivePreviewLayout(
            sheets: sheets, tileWidth: tileWidth ?? 0, tileHeight: tileHeight ?? 0, columns: columns,
            interval: settings.interval, span: span, ended: ended, programDates: timeBase == .programDate)
    }
}

/// The sheet being filled: its number, its pixels (made with its first picture) and which of its tiles have none.
struct LiveSheetCanvas {
    let number: Int64
    let start: Int64
    var pixels: [UInt8]?
    var missing: [Int] = []
    var filled = 0
    /// Each tile's own JPEG, in cell order (with `.iframeImages`).
    var images: [(cell: Int, jpeg: Data)] = []

    init(number: Int64, start: Int64) {
        self.number = number
        self.start = start
    }

    /// Copies a tile's pixels into cell `i` of a sheet of `columns` by `rows` such tiles.
    mutating func draw(_ tile: PixelBuffer, cell i: Int, columns: Int, rows: Int) {
        let stride = columns * tile.width * 3
        if pixels == nil { pixels = [UInt8](repeating: 0, count: stride * rows * tile.height) }
        let x = (i % columns) * tile.width
        let y = (i / columns) * tile.height
        let rowBytes = tile.width * 3
        tile.bytes.withUnsafeBufferPointer { source in
            pixels!.withUnsafeMutableBufferPointer { sheet in
                for row in 0..<tile.height {
                    let from = row * tile.bytesPerRow
                    let to = (y + row) * stride + x * 3
                    guard to + rowBytes <= sheet.count, from + rowBytes <= source.count else { return }
                    (sheet.baseAddress! + to).update(from: source.baseAddress! + from, count: rowBytes)
                }
            }
        }
    }
}
