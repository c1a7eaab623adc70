import FilmstripFormats
import FilmstripImaging
import FilmstripMedia
import FilmstripStreaming
import FilmstripSync
import Foundation

/// The work of one live run: turns each read of the source into tiles, fills sheets, and publishes each complete
/// sheet (sheet file, state, track files, in that order).
final class LiveTrackMaker {
    var state: LiveTrackState
    private let directory: URL
    let configuration: LivePreviewConfiguration
    private let span: Int64
    let interval: Int64
    private let perSheet: Int
    /// Columns of a sheet: the largest divisor of a sheet's tiles that is at most the configured columns, so that
    /// columns × rows is exactly a sheet's tiles (DASH players share a sheet's time out over its layout's cells).
    private let columns: Int
    private let publish: @Sendable (LivePreviewUpdate) -> Void
    /// Start (ms) of the next tile to make.
    private var cursor: Int64?
    private var canvas: LiveSheetCanvas?
    /// Opened segments by number, newest last.
    var opened: [(key: SegmentKey, segment: StreamSegment)] = []
    /// Reads in a row in which a segment could not be fetched.
    var failures: [SegmentKey: Int] = [:]
    let converter = FrameConverter()
    /// The encoded black sheet gap sheets get with DASH.
    private var placeholder: [UInt8]?
    let cancellation = CancellationFlag()

    struct SegmentKey: Hashable {
        var number: Int
        var discontinuity: Int
    }

    enum Tile {
        case picture(PixelBuffer)
        case missing
        /// The segment could not be fetched this time: try again on the next read.
        case wait
    }

    init(
        directory: URL, configuration: LivePreviewConfiguration, state: LiveTrackState, span: Int64, perSheet: Int,
        publish: @escaping @Sendable (LivePreviewUpdate) -> Void
    ) {
        self.directory = directory
        self.configuration = configuration
        self.state = state
        self.span = span
        self.perSheet = perSheet
        columns = (1...max(1, min(state.settings.columns, perSheet))).last { perSheet % $0 == 0 } ?? 1
        interval = state.settings.interval
        self.publish = publish
        cursor = state.next
    }

    /// Waits on the run's clock; `false` when the task was cancelled.
    func wait(_ duration: Duration) async -> Bool {
        do {
            try await configuration.clock.sleep(for: duration)
            return true
        } catch {
            return false
        }
    }

    /// Makes every tile the read lets make, publishing each sheet as it completes; at the end of the stream, the
    /// last sheet and the VOD tracks.
    func advance(_ read: LiveSource.Read, client: StreamingClient) async throws(MediaError) {
        // Times before the timeline's 0 (a DASH Period's presentationTimeOffset past its first segment) are left out.
        let segments = read.segments.filter { $0.start >= 0 }
        guard let last = segments.last else {
            if read.ended { try finish(edge: cursor ?? 0) }
            return
        }
        let edge = try Self.milliseconds(last.end)
        if state.origin == nil {
            // A folder a run published into before origins were kept counts from 0, as it did.
            let fresh = state.next == nil && state.sheets.isEmpty && state.timeBase == .programDate
            state.origin = fresh ? try Self.milliseconds(segments[0].start) : 0
        }
        let windowMs = Int64(((state.window ?? 0) * 1000).rounded())
        let oldest = sheetStart(edge - windowMs)
        if cursor == nil {
            let from = configuration.fromStart ? try Self.milliseconds(segments[0].start) : edge
            cursor = max(sheetStart(from), oldest)
        }
        // Down for longer than the window, or than the source keeps: what neither holds any more is skipped (its
        // sheets become gaps at once, not tile by tile).
        let held = max(oldest, sheetStart(try Self.milliseconds(segments[0].start)))
        if let next = cursor, next < held {
            if let open = canvas, open.number == sheetNumber(next) {
                // The open sheet keeps what it has; its other tiles are missing.
                canvas = open
            } else {
                canvas = nil
            }
            cursor = held
            if let open = canvas {
                canvas!.missing += Array(open.filled..<perSheet)
                canvas!.filled = perSheet
                try commit(edge: edge)
            }
        }
        while let t = cursor, t + interval <= edge || (read.ended && t < edge) {
            if Task.isCancelled { return }
            let tile = await self.tile(at: t, in: segments, client: client)
            // A segment to fetch again: the next read decides (even at the end of the stream).
            if case .wait = tile { return }
            let number = sheetNumber(t)
            let cell = Int((t - sheetStart(t)) / interval)
            if canvas?.number != number { canvas = newCanvas(number: number) }
            switch tile {
            case .picture(let image):
                canvas!.draw(image, cell: cell, columns: columns, rows: sheetRows)
                if writesIFrameImages { canvas!.images.append((cell, try Self.sequenceImage(image, configuration))) }
            default:
                canvas!.missing.append(cell)
            }
            canvas!.filled = cell + 1
            cursor = t + interval
            if cell + 1 == perSheet { try commit(edge: edge) }
        }
        if read.ended { try finish(edge: edge) }
    }

    private var sheetWidth: Int { columns * (state.tileWidth ?? 0) }
    private var sheetRows: Int { (perSheet + columns - 1) / columns }

    private func newCanvas(number: Int64) -> LiveSheetCanvas {
        var made = LiveSheetCanvas(number: number, start: sheetStart(number: number))
        // Tiles of the sheet before the run's first one have no picture.
        if let t = cursor { made.missing = Array(0..<Int((t - made.start) / interval)) }
        return made
    }

    /// The end of the stream: the partial last sheet is published and the tracks become VOD tracks.
    private func finish(edge: Int64) throws(MediaError) {
        state.ended = true
        if canvas != nil {
            try commit(edge: edge)
            return
        }
        try state.write(in: directory)
        try writeTracks()
        let first = Double(state.sheets.first?.start ?? 0) / 1000
        let end = state.sheets.last.map { Double($0.start + Int64($0.tiles) * interval) / 1000 } ?? first
        publish(LivePreviewUpdate(published: [], removed: [], window: first...max(first, end), lag: 0, ended: true))
    }

    /// Publishes the canvas: its sheet file, then the state, then the track files; then deletes what expired.
    private func commit(edge: Int64) throws(MediaError) {
        guard var sheet = canvas else { return }
        canvas = nil
        let tiles = sheet.filled
        sheet.missing = sheet.missing.filter { $0 < tiles }
        // DASH players divide a sheet by its layout: with `.dash` every sheet has the full layout's rows.
        let rows =
            configuration.preview.formats.contains(.dash)
            ? sheetRows : (tiles + columns - 1) / columns
        var published = LiveSheet(
            number: sheet.number, name: nil, start: sheet.start, tiles: tiles, missing: sheet.missing, rows: rows,
            bytes: 0)
        if sheet.missing.count < tiles, let tileHeight = state.tileHeight, let pixels = sheet.pixels {
            let name = configuration.preview.sheetName(Int(clamping: sheet.number))
            let height = rows * tileHeight
            let bytes: [UInt8]
            do {
                bytes = try pixels.withUnsafeBytes { pixels throws(ImagingError) in
                    try configuration.preview.encodeSheet(pixels.baseAddress!, width: sheetWidth, height: height)
                }
            } catch {
                throw MediaError(
                    .outputFailed, "cannot write \(directory.appendingPathComponent(name).path)",
                    underlying: error)
            }
            try write(Data(bytes), to: name)
            published.name = name
            published.bytes = bytes.count
        }
        if published.name == nil { try writePlaceholder(for: published.number) }
        if writesIFrameImages, !sheet.images.isEmpty { published.fragments = try writeIFrameImages(of: sheet) }
        // Sheets are consecutive: sheets the run skipped (down for a while) are gaps between, from the window's start
        // on (older ones would leave the window at once).
        let windowMs = Int64(((state.window ?? 0) * 1000).rounded())
        let windowStart = sheetNumber(edge - windowMs)
        var sheets = state.sheets
        var gaps: [LiveSheet] = []
        if let newest = sheets.last, newest.number + 1 < published.number {
            for n in max(newest.number + 1, windowStart)..<max(published.number, windowStart) {
                gaps.append(
                    LiveSheet(
                        number: n, name: nil, start: sheetStart(number: n), tiles: perSheet,
                        missing: Array(0..<perSheet),
                        rows: sheetRows, bytes: 0))
                try writePlaceholder(for: n)
            }
        }
        sheets += gaps + [published]
        var removed: [String] = []
        let leaving = sheets.prefix { $0.start + span <= edge - windowMs }.prefix(sheets.count - 1)
        for first in leaving {
            if let name = fileName(of: first) {
                state.retired.append(.init(name: name, after: edge + windowMs + span))
            }
            if first.fragments != nil {
                let media = LivePreviewTrackWriter.iFrameImagesMedia(first.number)
                state.retired.append(.init(name: media, after: edge + windowMs + span))
            }
        }
        sheets.removeFirst(leaving.count)
        state.sheets = sheets
        state.next = published.start + Int64(published.tiles) * interval
        try state.write(in: directory)
        try writeTracks()
        state.retired.removeAll { retired in
            guard retired.after <= edge else { return false }
            try? FileManager.default.removeItem(at: directory.appendingPathComponent(retired.name))
            removed.append(retired.name)
            return true
        }
        if !removed.isEmpty { try state.write(in: directory) }
        let end = Double(published.start + Int64(published.tiles) * interval) / 1000
        let first = Double(state.sheets.first?.start ?? published.start) / 1000
        publish(
            LivePreviewUpdate(
                published: gaps + [published], removed: removed, window: first...max(first, end),
                lag: max(0, Double(edge) / 1000 - end), ended: state.ended))
    }

    /// The file of a sheet: its image, or for a gap sheet with DASH its placeholder; `nil` for a gap without.
    private func fileName(of sheet: LiveSheet) -> String? {
        sheet.name ?? (writesDASH ? configuration.preview.sheetName(Int(clamping: sheet.number)) : nil)
    }

    private var writesDASH: Bool { configuration.preview.formats.contains(.dash) }
    private var writesIFrameImages: Bool { configuration.preview.formats.contains(.iframeImages) }

    /// With DASH, a gap sheet still has a file (a `$Number$` timeline names every number in it): a black image of the
    /// layout's size, no picture of any moment. HLS lists the sheet as `EXT-X-GAP` and the sidecars have no cue.
    private func writePlaceholder(for number: Int64) throws(MediaError) {
        guard writesDASH, let tileWidth = state.tileWidth, let tileHeight = state.tileHeight else { return }
        if placeholder == nil {
            let width = columns * tileWidth
            let height = sheetRows * tileHeight
            let black = [UInt8](repeating: 0, count: width * height * 3)
            do {
                placeholder = try black.withUnsafeBytes { pixels throws(ImagingError) in
                    try configuration.preview.encodeSheet(pixels.baseAddress!, width: width, height: height)
                }
            } catch {
                throw MediaError(.outputFailed, "cannot encode a placeholder sheet", underlying: error)
            }
        }
        try write(Data(placeholder ?? []), to: configuration.preview.sheetName(Int(clamping: number)))
    }

    /// Writes the track files again (a run that ended, started again).
    func rewriteTracks() throws(MediaError) { try writeTracks() }

    /// Writes every asked-for track file atomically, the WebVTT track last.
    private func writeTracks() throws(MediaError) {
        let layout = state.layout(span: span, columns: columns)
        let formats = configuration.preview.formats
        var files: [(String, String)] = []
        if formats.contains(.json) { files.append(("thumbnails.json", LivePreviewTrackWriter.jsonObjects(layout))) }
        if formats.contains(.hls) { files.append(("thumbnails.m3u8", LivePreviewTrackWriter.hlsPlaylist(layout))) }
        if formats.contains(.dash) {
            let template = configuration.preview.sheetName(nil)
            files.append(
                (
                    "thumbnails.mpd",
                    LivePreviewTrackWriter.dashMPD(
                        layout, mediaTemplate: template, rows: sheetRows,
                        availabilityStart: state.availabilityStart ?? Date(timeIntervalSince1970: 0),
                        publishTime: configuration.wallClock(), window: state.window ?? 0)
                ))
            if let periodStart = state.periodStart {
                // The set to add to the source's own MPD, in the Period that starts at `periodStart`.
                let set = LivePreviewTrackWriter.dashAdaptationSet(
                    layout, mediaTemplate: template, rows: sheetRows,
                    presentationTimeOffset: Int64((periodStart * 1000).rounded()))
                files.append(("thumbnails-adaptationset.xml", set + "\n"))
            }
        }
        if formats.contains(.iframeImages), let width = state.tileWidth, let height = state.tileHeight {
            // The initialisation section first: the playlist names it.
            let initialization = ImageIFrameSequence(images: [], width: width, height: height).file
            try write(initialization, to: LivePreviewTrackWriter.iFrameImagesInitialization)
            files.append(
                (
                    ImageIFrameSequence.playlistName,
                    LivePreviewTrackWriter.iFrameImagesPlaylist(layout, initializationLength: initialization.count)
                ))
        }
        if formats.contains(.vtt) {
            files.append((configuration.preview.trackName, LivePreviewTrackWriter.webVTT(layout)))
        }
        for (name, text) in files { try write(Data(text.utf8), to: name) }
    }

    /// Writes `data` to `name` in the track's folder, atomically.
    private func write(_ data: Data, to name: String) throws(MediaError) {
        let url = directory.appendingPathComponent(name)
        do {
            try data.write(to: url, options: .atomic)
        } catch {
            throw MediaError(.outputFailed, "cannot write \(url.path)", underlying: error)
        }
    }

    /// Writes the pictures of `sheet` as its I-frame image sequence's media file (fragments only: the
    /// initialisation section is a file of its own), each fragment numbered by its tile's place on the timeline;
    /// returns the fragments' lengths.
    private func writeIFrameImages(of sheet: LiveSheetCanvas) throws(MediaError) -> [Int] {
        let images = sheet.images.map { image in
            ImageIFrameSequence.Image(
                start: sheet.start + Int64(image.cell) * interval, duration: interval, jpeg: image.jpeg)
        }
        let sequence = ImageIFrameSequence(
            images: images, width: state.tileWidth ?? 0, height: state.tileHeight ?? 0,
            firstSequence: UInt32(truncatingIfNeeded: sheet.start / interval + Int64(sheet.images[0].cell) + 1))
        try write(
            sequence.file.subdata(in: sequence.initializationLength..<sequence.file.count),
            to: LivePreviewTrackWriter.iFrameImagesMedia(sheet.number))
        return sequence.fragments.map(\.count)
    }

    /// A tile's picture as an I-frame image sequence's JPEG.
    static func sequenceImage(
        _ image: PixelBuffer, _ configuration: LivePreviewConfiguration
    ) throws(MediaError) -> Data {
        do {
            let bytes = try image.bytes.withUnsafeBytes { pixels throws(ImagingError) in
                try configuration.preview.encodeSequenceImage(
                    pixels.baseAddress!, width: image.width, height: image.height, bytesPerRow: image.bytesPerRow)
            }
            return Data(bytes)
        } catch {
            throw MediaError(.outputFailed, "cannot encode a tile's image", underlying: error)
        }
    }

    /// Seconds as milliseconds, refusing what no clock holds.
    static func milliseconds(_ seconds: Double) throws(MediaError) -> Int64 {
        let ms = (seconds * 1000).rounded()
        guard ms.isFinite, ms >= 0, ms < 9.0e15 else {
            throw MediaError(.invalidMedia, "a segment time of \(seconds) s is out of range")
        }
        return Int64(ms)
    }

    /// Where the tiles are counted from (``LiveTrackState/origin``).
    var origin: Int64 { state.origin ?? 0 }

    /// The start of the sheet that holds time `t` (ms).
    func sheetStart(_ t: Int64) -> Int64 { origin + Self.floor(t - origin, span) }

    /// The number of the sheet that holds time `t`: its index from the origin, plus the spans before the origin
    /// (so numbers, and the sheets' file names, differ from one run's timeline to another's).
    func sheetNumber(_ t: Int64) -> Int64 { origin / span + Self.floor(t - origin, span) / span + 1 }

    /// The start of sheet `number` (ms).
    func sheetStart(number: Int64) -> Int64 { origin + (number - 1 - origin / span) * span }

    /// `value` rounded down to a multiple of `step`.
    static func floor(_ value: Int64, _ step: Int64) -> Int64 {
        let q = value / step
        return (value % step != 0 && value < 0 ? q - 1 : q) * step
    }
}
