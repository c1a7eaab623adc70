import FilmstripFormats
import FilmstripImaging
import FilmstripLoading
import FilmstripMedia
import FilmstripStreaming
import FilmstripSync
public import Foundation

/// Generates a preview track from a video: JPEG sprite sheets of `columns x rows` thumbnails and a WebVTT track
/// whose cues point into them with `#xywh=` regions.
///
/// ```swift
/// let summary = try await PreviewTrackGenerator.generate(from: videoURL, to: outputDirectory)
/// // outputDirectory/sprite-1.jpg …, outputDirectory/thumbnails.vtt
/// ```
///
/// Each thumbnail costs one seek and one keyframe decode (keyframe mode), scaled by swscale straight into the
/// sheet's memory. Several workers share the work, taking thumbnails in order, and each sheet is encoded once,
/// as soon as its last cell is filled, then freed. Cues are contiguous, `[k·interval, (k+1)·interval)`, and the
/// last ends at the video's duration.
public enum PreviewTrackGenerator {
    /// Generates the track. `progress` is called with (thumbnails done, total) from worker threads.
    public static func generate(
        from input: URL, to directory: URL, options: PreviewTrackConfiguration = PreviewTrackConfiguration(),
        progress: (@Sendable (Int, Int) -> Void)? = nil
    ) async throws -> PreviewTrackSummary {
        try options.validate()
        let started = Date()
        let cancellation = CancellationFlag()
        let network = MediaNetwork(
            transport: options.transport ?? DefaultTransport.shared, configuration: options.loading)
        guard !options.attach || StreamFrames.isManifest(input) else {
            throw MediaError(
                .invalidArgument, "attaching tracks needs a stream: an HLS playlist or a DASH MPD", url: input)
        }
        let existed = FileManager.default.fileExists(atPath: directory.path)
        do {
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        } catch {
            throw MediaError(
                .outputFailed, "cannot create \(directory.path): \(error.localizedDescription)", underlying: error)
        }
        do {
            if StreamFrames.isManifest(input) {
                return try await generateFromStream(
                    input, to: directory, options: options, started: started, progress: progress)
            }
            return try await generateFromFile(
                input, to: directory, options: options, network: network, cancellation: cancellation, started: started,
                progress: progress)
        } catch {
            // A run that failed before writing anything leaves no empty folder behind.
            if !existed, (try? FileManager.default.contentsOfDirectory(atPath: directory.path))?.isEmpty == true {
                try? FileManager.default.removeItem(at: directory)
            }
            throw error
        }
    }

    private static func generateFromFile(
        _ input: URL, to directory: URL, options: PreviewTrackConfiguration, network: MediaNetwork,
        cancellation: CancellationFlag, started: Date, progress: (@Sendable (Int, Int) -> Void)?
    ) async throws -> PreviewTrackSummary {
        let keys = ContentKeySource(keys: options.contentKeys, license: options.license)
        return try await withTaskCancellationHandler {
            // The first input tells the duration and size; it then serves as worker 0.
            let first = try await runBlocking {
                try InputHolder(
                    MediaInput(
                        .url(input, network: network), cancellation: cancellation, contentKeys: keys))
            }
            let outputs = try GenerationOutputs(
                duration: first.input.duration, displaySize: first.input.displaySize, url: input, directory: directory,
                options: options)
            let plan = outputs.primary
            // Thumbnails shrink the picture 4x or more in the usual settings: their keyframes skip the deblocking.
            let decoding = KeyframeDecoding.forImage(width: outputs.widestImage, of: first.input.geometry)
            let counters = WorkCounters()
            let workerCount = max(1, min(options.workers, plan.count))
            let totals = try await withThrowingTaskGroup(of: WorkerTotals.self) { group in
                for worker in 0..<workerCount {
                    group.addTask {
                        try await runBlocking {
                            let holder =
                                worker == 0
                                ? first
                                : try InputHolder(
                                    MediaInput(
                                        .url(input, network: network), cancellation: cancellation,
                                        contentKeys: keys))
                            let converters = outputs.makeConverters()
                            let bifConverter = outputs.needsBIFConverter ? FrameConverter() : nil
                            let analyzer = FrameConverter()
                            while true {
                                let k = counters.next.add(1, ordering: .relaxed).oldValue
                                guard k < plan.count else { break }
                                let frame = try chooseFrame(
                                    k, plan: plan, input: holder.input, mode: options.mode, decoding: decoding,
                                    analyzer: options.skipBlank ? analyzer : nil)
                                try outputs.fill(
                                    k, with: frame, converters: converters, quarterTurns: holder.input.quarterTurns,
                                    bifConverter: bifConverter)
                                let completed = counters.done.add(1, ordering: .relaxed).newValue
                                progress?(completed, plan.count)
                            }
                            return WorkerTotals(bytes: holder.input.bytesRead, decoded: holder.input.framesDecoded)
                        }
                    }
                }
                do {
                    var totals = (0, 0)
                    for try await child in group { totals = (totals.0 + child.bytes, totals.1 + child.decoded) }
                    return totals
                } catch {
                    cancellation.cancelAll()
                    throw error
                }
            }
            return try outputs.finish(started: started, bytesRead: totals.0, decodedFrames: totals.1)
        } onCancel: {
            cancellation.cancelAll()
        }
    }

    /// Writes the track files once every sheet is written (each atomically, after the sheets), and sums up.
    static func finish(
        plan: Plan, sheets: SheetAssembly, directory: URL, options: PreviewTrackConfiguration, started: Date,
        bytesRead: Int,
        decodedFrames: Int
    ) throws(MediaError) -> PreviewTrackSummary {
        let sheetURLs = try sheets.finish()
        let layout = plan.layout(options: options)
        var files = sheetURLs
        func write(_ name: String, _ bytes: Data) throws(MediaError) {
            let url = directory.appendingPathComponent(name)
            do {
                try bytes.write(to: url, options: .atomic)
            } catch {
                throw MediaError(
                    .outputFailed, "cannot write \(url.path): \(error.localizedDescription)", underlying: error)
            }
            files.append(url)
        }
        let sheetBytes = sheetURLs.map {
            ((try? FileManager.default.attributesOfItem(atPath: $0.path))?[.size] as? NSNumber)?.intValue ?? 0
        }
        let template = options.sheetName(nil)
        var summary = PreviewTrackSummary(
            thumbnails: plan.count, sheets: sheetURLs.count, duration: plan.duration,
            seconds: 0, tileSize: PixelSize(width: plan.tileWidth, height: plan.tileHeight),
            trackURL: directory.appendingPathComponent(options.trackName), sheetURLs: sheetURLs, bytesRead: bytesRead,
            decodedFrames: decodedFrames)
        summary.layout = layout
        summary.sheetBytes = sheetBytes
        if let storyboard = try sheets.finishStoryboard(directory: directory) {
            files.append(storyboard.image)
            try write("storyboard.json", Data(storyboard.json.utf8))
        }
        if let images = sheets.bifImages() {
            try write("thumbnails.bif", Data(PreviewTrackWriter.bif(images: images, starts: layout.starts)))
        }
        if let images = sheets.singleImages() {
            let sequence = ImageIFrameSequence(
                images: images.indices.map { k in
                    ImageIFrameSequence.Image(
                        start: layout.starts[k], duration: layout.ends[k] - layout.starts[k], jpeg: Data(images[k]))
                }, width: plan.tileWidth, height: plan.tileHeight)
            try write(ImageIFrameSequence.mediaName, sequence.file)
            let playlist = sequence.playlist(mediaName: ImageIFrameSequence.mediaName)
            try write(ImageIFrameSequence.playlistName, Data(playlist.utf8))
            summary.iFrameImageStream = sequence.stream
        }
        if options.formats.contains(.json) {
            try write("thumbnails.json", Data(PreviewTrackWriter.jsonObjects(layout).utf8))
        }
        if options.formats.contains(.dash) {
            try write(
                "thumbnails.mpd",
                Data(PreviewTrackWriter.dashMPD(layout, mediaTemplate: template, sheetBytes: sheetBytes).utf8))
            summary.dashAdaptationSet = PreviewTrackWriter.dashAdaptationSet(
                layout, mediaTemplate: template, sheetBytes: sheetBytes)
        }
        if options.formats.contains(.hls) {
            try write("thumbnails.m3u8", Data(PreviewTrackWriter.hlsImagePlaylist(layout).utf8))
            summary.imageStreamInf = PreviewTrackWriter.imageStreamInf(
                layout, uri: "thumbnails.m3u8", sheetBytes: sheetBytes)
        }
        if options.formats.contains(.vtt) {
            try write(options.trackName, Data(PreviewTrackWriter.webVTT(layout).utf8))
        }
        summary.files = files
        summary.seconds = Date().timeIntervalSince(started)
        return summary
    }

    /// The frame for thumbnail `k`.
    private static func chooseFrame(
        _ k: Int, plan: Plan, input: MediaInput, mode: PreviewTrackConfiguration.Mode, decoding: KeyframeDecoding,
        analyzer: FrameConverter?
    )
        throws(MediaError) -> OwnedFrame
    {
        let cue = CuePicture(start: plan.start(of: k), end: plan.end(of: k))
        guard var key = try cue.keyPacket(in: input, mode: mode) else {
            return try input.search.exactFrame(at: cue.start)
        }
        var frame = try input.decode(keyPacket: key, decoding)
        // --skip-blank: a black or uniform picture gives way to a later keyframe inside the cue.
        guard let analyzer else { return frame }
        var tries = 0
        while tries < 4, try isBlank(frame, analyzer: analyzer) {
            tries += 1
            let later = try input.search.keyPacket(atOrAfter: key.time + 0.001)
            guard later.time > key.time, cue.contains(later.time) else { break }
            key = later
            frame = try input.decode(keyPacket: later, decoding)
        }
        return frame
    }

    /// Whether a decoded frame is black or one flat colour (judged on a 64 px copy).
    static func isBlank(_ frame: OwnedFrame, analyzer: FrameConverter) throws(MediaError) -> Bool {
        let content = try analyzer.image(frame.pointer, width: 64, height: 36, quarterTurns: 0).content
        return content.isBlack || content.isUniform
    }
}

/// What one worker read and decoded (a struct, not a tuple: see `Indexed` for the compiler defect).
private struct WorkerTotals: Sendable {
    let bytes: Int
    let decoded: Int
}

/// The next thumbnail to take and the number finished, shared by the workers.
private final class WorkCounters: Sendable {
    let next = Atomic<Int>(0)
    let done = Atomic<Int>(0)
}

/// Lets a `MediaInput` (confined to one worker at a time) cross into a blocking task.
private final class InputHolder: @unchecked Sendable {
    let input: MediaInput
    init(_ input: MediaInput) { self.input = input }
}

/// Counts, times and geometry of a generation.
struct Plan: Sendable {
    let duration: Double
    let interval: Double
    let count: Int
    let tileWidth: Int
    let tileHeight: Int
    let columns: Int
    let rows: Int

    init(
        duration: Double, displaySize: (width: Int, height: Int), url: URL, options: PreviewTrackConfiguration
    )
        throws(MediaError)
    {
        guard duration > 0 else {
            throw MediaError(.invalidMedia, "the video's duration is unknown (a live stream?)", url: url)
        }
        self.duration = duration
        if let fixed = options.count {
            // A fixed count: cues of equal length that end at the duration.
            guard fixed <= options.maximumThumbnails else {
                throw MediaError(
                    .invalidArgument, "\(fixed) thumbnails asked for; the limit is \(options.maximumThumbnails)",
                    url: url)
            }
            count = max(1, min(fixed, Int(min(duration * 1000, 1e15)) - 1))
            interval = duration / Double(count)
        } else {
            interval = options.interval
            // The last cue must be at least a millisecond long.
            let planned = ((duration - 0.001) / interval).rounded(.up)
            guard planned <= Double(options.maximumThumbnails) else {
                throw MediaError(
                    .invalidArgument,
                    "one thumbnail every \(interval) s over the \(Int(duration)) s the video declares makes "
                        + "\(Int(min(planned, 1e15))) thumbnails; the limit is \(options.maximumThumbnails) (a longer "
                        + "interval or a fixed count stays within it)", url: url)
            }
            count = max(1, Int(planned))
        }
        let (w, h) = displaySize
        tileWidth = options.width
        tileHeight = max(2, Int((Double(options.width) * Double(h) / Double(w) / 2).rounded()) * 2)
        // Roku decodes HLS and DASH sheets up to 1080 px wide: with those outputs the columns are cut to fit.
        columns =
            options.formats.contains(.hls) || options.formats.contains(.dash)
            ? max(1, min(options.columns, 1080 / options.width)) : options.columns
        rows = options.rows
    }

    var perSheet: Int { columns * rows }
    var sheetCount: Int { (count + perSheet - 1) / perSheet }
    func start(of k: Int) -> Double { Double(k) * interval }
    func end(of k: Int) -> Double { min(Double(k + 1) * interval, duration) }
    func startMilliseconds(of k: Int) -> Int64 { Int64((Double(k) * interval * 1000).rounded()) }
    func endMilliseconds(of k: Int) -> Int64 {
        k == count - 1 ? Int64((duration * 1000).rounded()) : startMilliseconds(of: k + 1)
    }

    /// Used cells of sheet `s` and its row count (the last sheet is cut after its last used row).
    func cells(ofSheet s: Int) -> (count: Int, rows: Int) {
        let used = min(perSheet, count - s * perSheet)
        return (used, (used + columns - 1) / columns)
    }

    /// Whether every sheet keeps the full layout's height. DASH tiles share one size per Representation; HLS players
    /// take a sheet's size from the first sheet's `EXT-X-TILES` (Shaka Player multiplies the tile `RESOLUTION` by
    /// the first `LAYOUT`), so every sheet declares and has the full layout.
    func padsLastSheet(_ options: PreviewTrackConfiguration) -> Bool {
        options.formats.contains(.dash) || options.formats.contains(.hls)
    }

    /// The layout the track writers describe.
    func layout(options: PreviewTrackConfiguration) -> PreviewTrackLayout {
        PreviewTrackLayout(
            duration: duration, starts: (0..<count).map { startMilliseconds(of: $0) },
            ends: (0..<count).map { endMilliseconds(of: $0) }, tileWidth: tileWidth, tileHeight: tileHeight,
            columns: columns, rows: rows, sheetNames: (0..<sheetCount).map { options.sheetName($0 + 1) },
            sheetRows: (0..<sheetCount).map { padsLastSheet(options) ? rows : cells(ofSheet: $0).rows })
    }
}
