import FilmstripFormats
import FilmstripImaging
public import FilmstripMedia
import FilmstripStreaming
import FilmstripSync
public import Foundation

/// Follows a live HLS playlist or dynamic MPD and publishes a rolling preview track: sheets that each cover a fixed
/// span of media time, made from the keyframes of each new segment of the smallest rendition that serves the tile
/// size, and a live HLS image playlist and WebVTT and JSON sidecars that list the sheets in the window.
///
/// ```swift
/// var configuration = LivePreviewConfiguration()
/// configuration.preview.formats = [.vtt, .hls]
/// configuration.sheetSpan = 10
/// for try await update in LivePreviewTrackGenerator(source: liveURL, directory: out, configuration: configuration) {
///     print(update.published.count, "sheets, \(update.lag) s behind the edge")
/// }
/// ```
///
/// - A sheet is published once its span is complete (the tracks then list it) and never changes: its file is
///   written before the track files, each track file atomically, so a reader never sees a sheet that does not exist.
/// - Sheets that leave the window (``LivePreviewConfiguration/window``) are deleted once no playlist a player may
///   still hold lists them (one window and one sheet span later).
/// - A run started again on the same folder resumes after the newest published sheet (`DIR/.filmstrip-live.json`);
///   time the source dropped meanwhile is a gap. A gap in the source (a missing segment, `EXT-X-GAP`, a segment that
///   cannot be read) is a gap in the track: no cue in WebVTT and JSON, an `EXT-X-GAP` sheet in HLS when the whole
///   sheet is missing (a partly missing sheet's missing tiles are black).
/// - The timeline: an HLS source with `EXT-X-PROGRAM-DATE-TIME` gives cue times in seconds since 1970 (its program
///   date); without, media time from the first segment the first run saw; a DASH source, its presentation time.
/// - When the source ends, the last (partial) sheet is published, the tracks become VOD tracks and the sequence ends.
///   Cancelling the task that iterates stops the run after what is complete is published.
public struct LivePreviewTrackGenerator: AsyncSequence, Sendable {
    public typealias Element = LivePreviewUpdate

    /// The live source.
    public let source: URL
    /// Where the sheets and track files are written.
    public let directory: URL
    /// The settings.
    public let configuration: LivePreviewConfiguration

    /// A run of `source` into `directory`; nothing happens until it is iterated.
    public init(source: URL, directory: URL, configuration: LivePreviewConfiguration) {
        self.source = source
        self.directory = directory
        self.configuration = configuration
    }

    public func makeAsyncIterator() -> AsyncThrowingStream<LivePreviewUpdate, any Error>.Iterator {
        let (stream, continuation) = AsyncThrowingStream<LivePreviewUpdate, any Error>.makeStream()
        let run = Task { [self] in
            do {
                try await self.run { continuation.yield($0) }
                continuation.finish()
            } catch {
                continuation.finish(throwing: error)
            }
        }
        continuation.onTermination = { _ in run.cancel() }
        return stream.makeAsyncIterator()
    }

    /// Runs until the source ends (or the task is cancelled), calling `publish` after each publication.
    public func run(publish: @escaping @Sendable (LivePreviewUpdate) -> Void) async throws(MediaError) {
        let (interval, span, perSheet) = try configuration.spans()
        let settings = LiveTrackState.Settings(
            width: configuration.preview.width, columns: configuration.preview.columns,
            rows: configuration.preview.rows, interval: interval, span: span,
            format: configuration.preview.imageFormat.rawValue, quality: configuration.preview.quality,
            mode: configuration.preview.mode.rawValue, prefix: configuration.preview.sheetPrefix,
            formats: configuration.preview.formats.map(\.rawValue).sorted())
        do {
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        } catch {
            throw MediaError(.outputFailed, "cannot create \(directory.path)", underlying: error)
        }
        let state =
            try LiveTrackState.read(in: directory) ?? LiveTrackState(source: source.absoluteString, settings: settings)
        guard state.source == source.absoluteString, state.settings == settings else {
            throw MediaError(
                .invalidArgument,
                "\(directory.path) holds a live track of another source or made with other settings; "
                    + "use another folder, or remove it")
        }
        let maker = LiveTrackMaker(
            directory: directory, configuration: configuration, state: state, span: span, perSheet: perSheet,
            publish: publish)
        if state.ended {
            // Ended: the track files are written again (a run killed between the state and them left them live).
            try maker.rewriteTracks()
            return
        }
        // A run that published before goes on whatever the source is now: it may have ended meanwhile.
        let resuming = state.next != nil
        let reader = try await LiveSource(
            url: source, configuration: configuration, timeBase: state.timeBase, resuming: resuming)
        var first = !resuming
        while !Task.isCancelled {
            let read: LiveSource.Read
            do {
                read = try await reader.read(first: first)
            } catch {
                if first || error.kind == .invalidArgument { throw error }
                MediaLogging.logger?.warning(
                    "cannot read the live source", metadata: ["url": "\(source)", "error": "\(error)"])
                guard await maker.wait(reader.failed()) else { return }
                continue
            }
            // The source's DVR window, as large as it has been seen (a playlist that grows, grows it).
            let window = Swift.min(
                LivePreviewConfiguration.longestWindow,
                configuration.window ?? Swift.max(read.window, Double(span) / 1000, maker.state.window ?? 0))
            if window != maker.state.window { maker.state.window = window }
            first = false
            maker.state.timeBase = reader.timeBase
            maker.state.periodStart = read.periodStart ?? maker.state.periodStart
            if maker.state.availabilityStart == nil {
                // Without one from the source: now, less the media time of the live edge.
                maker.state.availabilityStart =
                    read.availabilityStart
                    ?? configuration.wallClock().addingTimeInterval(-(read.segments.last?.end ?? 0))
            }
            try await maker.advance(read, client: reader.client)
            if maker.state.ended { return }
            guard await maker.wait(read.next) else { return }
        }
    }
}
