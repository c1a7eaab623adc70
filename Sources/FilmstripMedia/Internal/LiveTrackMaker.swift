import FilmstripFormats
import FilmstripImaging
import FilmstripStreaming
import FilmstripSync
import Foundation

/// The work of one live run: turns each read of the source into tiles, fills sheets, and publishes each complete
/// sheet (sheet file, state, track files, in that order).
final class LiveTrackMaker {
    var state: LiveTrackState
    private let directory: URL
    private let configuration: LivePreviewConfiguration
    private let span: Int64
    private let interval: Int64
    private let perSheet: Int
    /// Columns of a sheet: the largest divisor of a sheet's tiles that is at most the configured columns, so that
    /// columns × rows is exactly a sheet's tiles (DASH players share a sheet's time out over its layout's cells).
    private let columns: Int
    private let publish: @Sendable (LivePreviewUpdate) -> Void
    /// Start (ms) of the next tile to make.
    private var cursor: Int64?
    private var canvas: LiveSheetCanvas?
    /// Opened segments by number, newest last.
    private var opened: [(key: SegmentKey, segment: StreamSegment)] = []
    /// Reads in a row in which a segment could not be fetched.
    private var failures: [SegmentKey: Int] = [:]
    private let converter = FrameConverter()
    /// The encoded black sheet gap sheets get with DASH.
    private var placeholder: [UInt8]?
    private let cancellation = CancellationFlag()

    private struct SegmentKey: Hashable {
        var number: Int
        var discontinuity: Int
    }

    private enum Tile {
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
        let windowMs = Int64(((state.window ?? 0) * 1000).rounded())
        let oldest = Self.floor(edge - windowMs, span)
        if cursor == nil {
            let from = configuration.fromStart ? try Self.milliseconds(segments[0].start) : edge
            cursor = max(Self.floor(from, span), oldest)
        }
        // Down for longer than the window, or than the source keeps: what neither holds any more is skipped (its
        // sheets become gaps at once, not tile by tile).
        let held = max(oldest, Self.floor(try Self.milliseconds(segments[0].start), span))
        if let next = cursor, next < held {
            if let open = canvas, open.number == next / span + 1 {
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
            let number = Self.floor(t, span) / span + 1
            let cell = Int((t - Self.floor(t, span)) / interval)
            if canvas?.number != number { canvas = newCanvas(number: number) }
            switch tile {
            case .picture(let image):
                canvas!.draw(image, cell: cell, columns: columns, rows: sheetRows)
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
        var made = LiveSheetCanvas(number: number, start: (number - 1) * span)
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
                try Data(bytes).write(to: directory.appendingPathComponent(name), options: .atomic)
            } catch {
                throw MediaError(
                    .outputFailed, "cannot write \(directory.appendingPathComponent(name).path)",
                    underlying: error)
            }
            published.name = name
            published.bytes = bytes.count
        }
        if published.name == nil { try writePlaceholder(for: published.number) }
        // Sheets are consecutive: sheets the run skipped (down for a while) are gaps between, from the window's start
        // on (older ones would leave the window at once).
        let windowMs = Int64(((state.window ?? 0) * 1000).rounded())
        let windowStart = Self.floor(edge - windowMs, span) / span + 1
        var sheets = state.sheets
        var gaps: [LiveSheet] = []
        if let newest = sheets.last, newest.number + 1 < published.number {
            for n in max(newest.number + 1, windowStart)..<max(published.number, windowStart) {
                gaps.append(
                    LiveSheet(
                        number: n, name: nil, start: (n - 1) * span, tiles: perSheet, missing: Array(0..<perSheet),
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
        let url = directory.appendingPathComponent(configuration.preview.sheetName(Int(clamping: number)))
        do {
            try Data(placeholder ?? []).write(to: url, options: .atomic)
        } catch {
            throw MediaError(.outputFailed, "cannot write \(url.path)", underlying: error)
        }
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
        if formats.contains(.vtt) {
            files.append((configuration.preview.trackName, LivePreviewTrackWriter.webVTT(layout)))
        }
        for (name, text) in files {
            let url = directory.appendingPathComponent(name)
            do {
                try Data(text.utf8).write(to: url, options: .atomic)
            } catch {
                throw MediaError(.outputFailed, "cannot write \(url.path)", underlying: error)
            }
        }
    }

    // MARK: Tiles

    /// The picture for the tile starting at `t` (ms): a keyframe inside the tile (in its segment, or at the start of
    /// the next one in the same discontinuity), else the keyframe before it in its segment (`.auto` and `.accurate`:
    /// the exact frame at its start).
    private func tile(at t: Int64, in segments: [SegmentReference], client: StreamingClient) async -> Tile {
        let start = Double(t) / 1000
        let end = Double(t + interval) / 1000
        guard let i = Self.segment(containing: start, in: segments), !segments[i].isGap else { return .missing }
        let reference = segments[i]
        let here: StreamSegment
        switch await open(reference, client: client) {
        case .success(let segment): here = segment
        case .failure(let failure): return failure.tile
        }
        let mode = configuration.preview.mode
        var choice: (StreamSegment, OwnedPacket?) = (here, nil)
        if mode != .accurate {
            if let key = here.keyPacket(from: start, before: end) {
                choice = (here, key)
            } else if i + 1 < segments.count, segments[i + 1].start < end - 1e-6, !segments[i + 1].isGap,
                segments[i + 1].discontinuitySequence == reference.discontinuitySequence,
                case .success(let next) = await open(segments[i + 1], client: client, counting: false),
                let key = next.firstKeyPacket, next.time(of: key) < end - 1e-6
            {
                choice = (next, key)
            } else if mode == .keyframe, let key = here.keyPacket(atOrBefore: start) {
                choice = (here, key)
            }
        }
        guard let width = state.tileWidth, let height = state.tileHeight else { return .missing }
        let job = Handoff((choice.0, choice.1, converter))
        do {
            let image = try await runBlocking { () throws -> PixelBuffer in
                let (segment, key, converter) = job.value
                let frame: OwnedFrame
                if let key {
                    frame = try segment.decode(key).frame
                } else {
                    guard let exact = try segment.exactFrame(at: start).frame else {
                        throw MediaError(.decodeFailed, "no frame at \(start) s", url: segment.reference.url)
                    }
                    frame = exact
                }
                let turns = segment.input.quarterTurns
                let (w, h) = FrameGeometry.turned(width, height, by: turns)
                return try converter.image(frame.pointer, width: w, height: h, quarterTurns: turns)
            }
            return .picture(image)
        } catch {
            MediaLogging.logger?.warning(
                "a live tile has no picture", metadata: ["time": "\(start)", "error": "\(error)"])
            return .missing
        }
    }

    /// The segment opened (fetched once); a segment that cannot be fetched is waited for over two more reads, then
    /// counted missing; one that does not demux is missing.
    private func open(
        _ reference: SegmentReference, client: StreamingClient, counting: Bool = true
    ) async -> Result<StreamSegment, TileFailure> {
        let key = SegmentKey(number: reference.number, discontinuity: reference.discontinuitySequence)
        if let found = opened.first(where: { $0.key == key }) { return .success(found.segment) }
        let data: Data
        do {
            data = try await StreamFrames.bytes(of: reference, client: client, url: reference.url)
        } catch {
            // A look-ahead's failure is not the segment's: its own tile counts it.
            guard counting else { return .failure(TileFailure(tile: .wait)) }
            failures[key, default: 0] += 1
            if failures.count > 64 { failures = failures.filter { $0.key == key } }
            return .failure(TileFailure(tile: failures[key]! < 3 ? .wait : .missing))
        }
        failures[key] = nil
        let job = Handoff((reference, data, cancellation))
        do {
            let segment = try await runBlocking {
                Handoff(try StreamSegment(reference: job.value.0, bytes: job.value.1, cancellation: job.value.2))
            }.value
            if state.tileWidth == nil {
                let (w, h) = segment.input.displaySize
                state.tileWidth = configuration.preview.width
                state.tileHeight = max(
                    2, Int((Double(configuration.preview.width) * Double(h) / Double(max(1, w)) / 2).rounded()) * 2)
            }
            opened.append((key, segment))
            if opened.count > 3 { opened.removeFirst() }
            return .success(segment)
        } catch {
            return .failure(TileFailure(tile: .missing))
        }
    }

    private struct TileFailure: Error {
        var tile: Tile
    }

    private static func segment(containing t: Double, in segments: [SegmentReference]) -> Int? {
        var low = 0
        var high = segments.count - 1
        guard high >= 0, segments[0].start <= t + 1e-6 else { return nil }
        while low < high {
            let mid = (low + high + 1) / 2
            if segments[mid].start <= t + 1e-6 { low = mid } else { high = mid - 1 }
        }
        return segments[low].end > t + 1e-6 ? low : nil
    }

    /// Seconds as milliseconds, refusing what no clock holds.
    static func milliseconds(_ seconds: Double) throws(MediaError) -> Int64 {
        let ms = (seconds * 1000).rounded()
        guard ms.isFinite, ms >= 0, ms < 9.0e15 else {
            throw MediaError(.invalidMedia, "a segment time of \(seconds) s is out of range")
        }
        return Int64(ms)
    }

    /// `value` rounded down to a multiple of `step`.
    static func floor(_ value: Int64, _ step: Int64) -> Int64 {
        let q = value / step
        return (value % step != 0 && value < 0 ? q - 1 : q) * step
    }
}
