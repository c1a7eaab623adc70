import CFFmpeg
import FilmstripFormats
import FilmstripImaging
public import Foundation
import Synchronization

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
        from input: URL, to directory: URL, options: PreviewTrackOptions = PreviewTrackOptions(),
        progress: (@Sendable (Int, Int) -> Void)? = nil
    ) async throws -> PreviewTrackSummary {
        try options.validate()
        let started = Date()
        let cancellation = CancellationFlag()
        let network = MediaNetwork(transport: options.transport ?? sharedTransport, configuration: options.loading)
        do {
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        } catch {
            throw MediaError(.outputFailed, "cannot create \(directory.path): \(error.localizedDescription)")
        }
        if StreamFrames.isManifest(input) {
            return try await generateFromStream(
                input, to: directory, options: options, started: started, progress: progress)
        }
        return try await withTaskCancellationHandler {
            // The first input tells the duration and size; it then serves as worker 0.
            let first = try await runBlocking {
                try InputHolder(MediaInput(url: input, network: network, cancellation: cancellation))
            }
            let plan = try Plan(input: first.input, options: options)
            let sheets = SheetAssembly(plan: plan, directory: directory, options: options)
            let counters = WorkCounters()
            let workerCount = max(1, min(options.workers, plan.count))
            let totals = try await withThrowingTaskGroup(of: (Int, Int).self) { group in
                for worker in 0..<workerCount {
                    group.addTask {
                        try await runBlocking {
                            let holder =
                                worker == 0
                                ? first
                                : try InputHolder(MediaInput(url: input, network: network, cancellation: cancellation))
                            let converter = FrameConverter()
                            while true {
                                let k = counters.next.add(1, ordering: .relaxed).oldValue
                                guard k < plan.count else { break }
                                let frame = try chooseFrame(k, plan: plan, input: holder.input, mode: options.mode)
                                try sheets.fill(
                                    k, with: frame, converter: converter, quarterTurns: holder.input.quarterTurns)
                                let completed = counters.done.add(1, ordering: .relaxed).newValue
                                progress?(completed, plan.count)
                            }
                            return (holder.input.bytesRead, holder.input.framesDecoded)
                        }
                    }
                }
                do {
                    var totals = (0, 0)
                    for try await (bytes, decoded) in group { totals = (totals.0 + bytes, totals.1 + decoded) }
                    return totals
                } catch {
                    cancellation.cancelAll()
                    throw error
                }
            }
            return try finish(
                plan: plan, sheets: sheets, directory: directory, options: options, started: started,
                bytesRead: totals.0, decodedFrames: totals.1)
        } onCancel: {
            cancellation.cancelAll()
        }
    }

    /// Writes the track once every sheet is written, and sums up.
    static func finish(
        plan: Plan, sheets: SheetAssembly, directory: URL, options: PreviewTrackOptions, started: Date, bytesRead: Int,
        decodedFrames: Int
    ) throws(MediaError) -> PreviewTrackSummary {
        let sheetURLs = try sheets.finish()
        let trackURL = directory.appendingPathComponent(options.trackName)
        do {
            try Data(plan.webVTT(options: options).utf8).write(to: trackURL, options: .atomic)
        } catch {
            throw MediaError(.outputFailed, "cannot write \(trackURL.path): \(error.localizedDescription)")
        }
        return PreviewTrackSummary(
            thumbnails: plan.count, sheets: sheetURLs.count, duration: plan.duration,
            seconds: Date().timeIntervalSince(started),
            tileSize: ImageSize(width: plan.tileWidth, height: plan.tileHeight),
            trackURL: trackURL, sheetURLs: sheetURLs, bytesRead: bytesRead, decodedFrames: decodedFrames)
    }

    /// The frame for thumbnail `k`.
    private static func chooseFrame(
        _ k: Int, plan: Plan, input: MediaInput, mode: PreviewTrackOptions.Mode
    )
        throws(MediaError) -> OwnedFrame
    {
        let start = plan.start(of: k)
        switch mode {
        case .accurate:
            return try input.exactFrame(at: start)
        case .keyframe:
            var key = try input.keyPacket(atOrAfter: start)
            if key.time >= plan.end(of: k) || key.time < start - 1e-6 {
                // No keyframe inside the cue: the one before it is the nearest honest picture.
                key = try input.keyPacket(atOrBefore: start)
            }
            return try input.decode(keyPacket: key)
        }
    }
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

    init(input: MediaInput, options: PreviewTrackOptions) throws(MediaError) {
        try self.init(duration: input.duration, displaySize: input.displaySize, url: input.url, options: options)
    }

    init(
        duration: Double, displaySize: (width: Int, height: Int), url: URL, options: PreviewTrackOptions
    )
        throws(MediaError)
    {
        guard duration > 0 else {
            throw MediaError(.invalidMedia, "the video's duration is unknown (a live stream?)", url: url)
        }
        self.duration = duration
        interval = options.interval
        // The last cue must be at least a millisecond long.
        count = max(1, Int(((duration - 0.001) / interval).rounded(.up)))
        let (w, h) = displaySize
        tileWidth = options.width
        tileHeight = max(2, Int((Double(options.width) * Double(h) / Double(w) / 2).rounded()) * 2)
        columns = options.columns
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

    func webVTT(options: PreviewTrackOptions) -> String {
        var text = "WEBVTT\n\n"
        text.reserveCapacity(count * 72)
        for k in 0..<count {
            let cell = k % perSheet
            text += timestamp(startMilliseconds(of: k)) + " --> " + timestamp(endMilliseconds(of: k)) + "\n"
            text += "\(options.sheetPrefix)\(k / perSheet + 1).jpg#xywh=\((cell % columns) * tileWidth),"
            text += "\((cell / columns) * tileHeight),\(tileWidth),\(tileHeight)\n\n"
        }
        return text
    }

    private func timestamp(_ ms: Int64) -> String { WebVTTTimestamp.string(milliseconds: ms) }
}

/// Sheet memory shared by the workers. Each cell is written by exactly one worker, so cells never overlap; the
/// bookkeeping (allocation, remaining cells, encoding) is under a mutex.
final class SheetAssembly: Sendable {
    private final class Sheet: @unchecked Sendable {
        // Written by workers in disjoint cells; read by the encoder after the last cell is done (the mutex
        // hand-off orders those accesses).
        let memory: UnsafeMutableRawBufferPointer
        let width: Int
        let height: Int
        var remaining: Int

        init(width: Int, height: Int, cells: Int) {
            self.width = width
            self.height = height
            memory = .allocate(byteCount: width * height * 3, alignment: 64)
            memory.initializeMemory(as: UInt8.self, repeating: 0)
            remaining = cells
        }

        deinit { memory.deallocate() }
    }

    private let plan: Plan
    private let directory: URL
    private let options: PreviewTrackOptions
    private let state = Mutex<(sheets: [Int: Sheet], written: [Int: URL])>(([:], [:]))

    init(plan: Plan, directory: URL, options: PreviewTrackOptions) {
        self.plan = plan
        self.directory = directory
        self.options = options
    }

    func fill(_ k: Int, with frame: OwnedFrame, converter: FrameConverter, quarterTurns: Int) throws(MediaError) {
        let s = k / plan.perSheet
        let cell = k % plan.perSheet
        let sheet = state.withLock { state -> Sheet in
            if let sheet = state.sheets[s] { return sheet }
            let (cells, rows) = plan.cells(ofSheet: s)
            let sheet = Sheet(width: plan.columns * plan.tileWidth, height: rows * plan.tileHeight, cells: cells)
            state.sheets[s] = sheet
            return sheet
        }
        let stride = sheet.width * 3
        let x = (cell % plan.columns) * plan.tileWidth
        let y = (cell / plan.columns) * plan.tileHeight
        let origin = sheet.memory.baseAddress!.assumingMemoryBound(to: UInt8.self) + y * stride + x * 3
        if quarterTurns == 0 {
            try converter.convert(
                frame.pointer, width: plan.tileWidth, height: plan.tileHeight, into: origin, stride: stride)
        } else {
            let (w, h) = quarterTurns % 2 == 1 ? (plan.tileHeight, plan.tileWidth) : (plan.tileWidth, plan.tileHeight)
            let image = try converter.image(frame.pointer, width: w, height: h, quarterTurns: quarterTurns)
            image.bytes.withUnsafeBytes { source in
                for row in 0..<plan.tileHeight {
                    (origin + row * stride).update(
                        from: source.baseAddress!.assumingMemoryBound(to: UInt8.self) + row * image.bytesPerRow,
                        count: image.bytesPerRow)
                }
            }
        }
        let complete = state.withLock { state -> Bool in
            sheet.remaining -= 1
            return sheet.remaining == 0
        }
        if complete { try write(s, sheet) }
    }

    private func write(_ s: Int, _ sheet: Sheet) throws(MediaError) {
        let url = directory.appendingPathComponent("\(options.sheetPrefix)\(s + 1).jpg")
        do {
            let bytes = try JPEGCodec.encodeRGB(
                UnsafeRawPointer(sheet.memory.baseAddress!), width: sheet.width, height: sheet.height,
                bytesPerRow: sheet.width * 3, quality: options.quality, subsampling: options.chromaSubsampling)
            try Data(bytes).write(to: url, options: .atomic)
        } catch {
            throw MediaError(.outputFailed, "cannot write \(url.path): \(error)")
        }
        state.withLock { state in
            state.sheets[s] = nil
            state.written[s] = url
        }
    }

    /// The written sheets in order; fails if any sheet is incomplete.
    func finish() throws(MediaError) -> [URL] {
        let written = state.withLock { $0.written }
        guard written.count == plan.sheetCount else {
            throw MediaError(.outputFailed, "only \(written.count) of \(plan.sheetCount) sheets were completed")
        }
        return (0..<plan.sheetCount).map { written[$0]! }
    }
}
