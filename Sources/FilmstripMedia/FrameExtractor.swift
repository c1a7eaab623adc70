public import FilmstripFormats
public import FilmstripImaging
public import FilmstripLoading
import FilmstripSync
public import Foundation

/// Options of a ``FrameExtractor``. The defaults give the fastest result: the keyframe at or before the time.
public struct FrameExtractorConfiguration: Sendable {
    /// The largest output size; the aspect ratio is kept and images are never enlarged. Default: none.
    public var maximumSize: PixelSize?
    /// Turn the image as the video's display matrix asks (portrait phone videos). Default `true`.
    public var appliesPreferredTrackTransform = true
    /// How far before the requested time the frame may be, in seconds. Default: any (a keyframe at or before).
    public var toleranceBefore: Double = .infinity
    /// How far after the requested time the frame may be, in seconds. Default 0.
    public var toleranceAfter: Double = 0
    /// Timeouts, size limit, retries and headers for http(s) inputs.
    public var loading = LoadingConfiguration(maximumResponseSize: 16 << 20, requestTimeout: 15, resourceTimeout: 60)
    /// The HTTP transport; `nil` uses ``DefaultTransport/shared``.
    public var transport: (any DataLoading)?
    /// The local wall clock: where a live stream's window is now (a DASH `UTCTiming` element corrects it), and when
    /// its manifest is due for a refresh. Default: the system's; tests hand in one they move themselves.
    public var wallClock: @Sendable () -> Date = { Date() }

    /// The defaults.
    public init() {}

    /// Options for the exact frame at each time (both tolerances zero).
    public static var exact: FrameExtractorConfiguration {
        var options = FrameExtractorConfiguration()
        options.toleranceBefore = 0
        options.toleranceAfter = 0
        return options
    }

    var network: MediaNetwork {
        MediaNetwork(transport: transport ?? DefaultTransport.shared, configuration: loading)
    }
}

/// A decoded video frame as an RGB image.
public struct VideoFrame: Sendable {
    /// The image, scaled and turned per the options.
    public var image: PixelBuffer
    /// The time that was asked for, in seconds.
    public var requestedTime: Double
    /// The presentation time of the frame used, in seconds from the start of the video.
    public var actualTime: Double
    /// Whether the frame is a keyframe.
    public var isKeyframe: Bool
}

/// Extracts frames from a video file, a progressive http(s) video, or an HLS or DASH presentation (local or http),
/// like a native asset image generator.
///
/// ```swift
/// let extractor = FrameExtractor(url: videoURL, options: {
///     var o = FrameExtractorConfiguration(); o.maximumSize = PixelSize(width: 320, height: 320); return o
/// }())
/// let poster = try await extractor.image(at: 12)            // the keyframe at or before 12 s
/// for try await frame in extractor.images(at: [5, 1, 30]) {  // in request order, each keyframe decoded once
///     print(frame.requestedTime, frame.actualTime)
/// }
/// ```
///
/// Over http(s), only what is needed is read (the index, then the keyframes' bytes) with bounded `Range`
/// requests; ``bytesRead`` says how much. An HLS master or media playlist or an MPD (by extension, or for local files
/// by content) goes through the streaming layer: the rendition is the smallest at least ``FrameExtractorConfiguration/
/// maximumSize`` (else the largest), and only the manifests, that rendition's initialisation data and the segments
/// that hold the times asked for are fetched, one `Range` request per byte-range segment. Work runs on the extractor's own thread, one call at a time;
/// cancelling a call stops its reading and decoding promptly.
public final class FrameExtractor: Sendable {
    /// The input.
    public let url: URL
    /// The options.
    public let options: FrameExtractorConfiguration

    private let queue: DispatchQueue
    private let cancellation = CancellationFlag()
    /// HLS and DASH presentations go through the streaming layer instead of an FFmpeg input.
    private let stream: StreamFrames?
    /// The opened input, touched only on `queue`.
    private let input = InputBox()
    private struct Counters {
        var calls = 0
        /// Totals of inputs already closed (after failures), plus those of the open input.
        var retired = (bytes: 0, requests: 0, decoded: 0)
        var live = (bytes: 0, requests: 0, decoded: 0)
    }
    private let counters = Mutex(Counters())

    /// Creates an extractor; the input is opened on first use.
    public init(url: URL, options: FrameExtractorConfiguration = FrameExtractorConfiguration()) {
        self.url = url
        self.options = options
        queue = DispatchQueue(label: "filmstrip.frame-extractor")
        stream = StreamFrames.isManifest(url) ? StreamFrames(url: url, options: options) : nil
    }

    /// Bytes read so far: received over HTTP for remote inputs (every `Range` response body), read from disk for
    /// local files.
    public var bytesRead: Int {
        if let stream { return stream.client.statistics.bytes }
        return counters.withLock { $0.retired.bytes + $0.live.bytes }
    }
    /// HTTP requests made so far.
    public var requestCount: Int {
        if let stream { return stream.client.statistics.requests }
        return counters.withLock { $0.retired.requests + $0.live.requests }
    }
    /// Frames the decoder has produced so far.
    public var decodedFrameCount: Int {
        if let stream { return stream.framesDecoded }
        return counters.withLock { $0.retired.decoded + $0.live.decoded }
    }

    /// The duration of the video in seconds (for a live stream, the end of what is available now).
    public func duration() async throws -> Double {
        if let stream { return try await stream.duration() }
        return try await perform { $0.duration }
    }

    /// The keyframe times of a file with an index (MP4, MKV), ascending, read from the index alone (no decoding);
    /// empty for inputs without one (MPEG-TS files, streams).
    public func keyframeTimes() async throws -> [Double] {
        if stream != nil { return [] }
        return try await perform { $0.indexedKeyframeTimes() }
    }

    /// The display size of the video (after sample aspect ratio and, if applied, rotation).
    public func naturalSize() async throws -> PixelSize {
        let applies = options.appliesPreferredTrackTransform
        if let stream {
            let timeline = try await stream.timeline()
            if let size = timeline.size { return size }
            let first = try await stream.open(0, of: timeline, cancellation: CancellationFlag())
            let (w, h) = first.input.geometry.outputSize(fittingIn: nil, turning: applies)
            return PixelSize(width: w, height: h)
        }
        return try await perform { input in
            let (w, h) = input.geometry.outputSize(fittingIn: nil, turning: applies)
            return PixelSize(width: w, height: h)
        }
    }

    /// The frame for `seconds` under the tolerances.
    ///
    /// - Throws: ``MediaError``: ``MediaError/Kind/timeOutOfRange`` past the end, and the kinds for unreadable,
    ///   damaged or video-less inputs.
    public func image(at seconds: Double) async throws -> VideoFrame {
        let options = self.options
        if let stream {
            let flag = CancellationFlag()
            let result = Mutex<VideoFrame?>(nil)
            try await withTaskCancellationHandler {
                try await stream.frames(at: [seconds], options: options, cancellation: flag) { frame in
                    result.withLock { $0 = frame }
                }
            } onCancel: {
                flag.cancelAll()
            }
            guard let frame = result.withLock({ $0 }) else { throw MediaError(.decodeFailed, "no frame", url: url) }
            return frame
        }
        return try await perform { input in
            var cache = KeyframeCache()
            return try Self.frame(at: seconds, input: input, options: options, cache: &cache)
        }
    }

    /// Frames for several times, yielded in the order asked. Times are visited in ascending order and each needed
    /// keyframe is decoded once.
    public func images(at times: [Double]) -> AsyncThrowingStream<VideoFrame, any Error> {
        let options = self.options
        if let stream {
            return AsyncThrowingStream { continuation in
                let flag = CancellationFlag()
                let task = Task {
                    do {
                        try await stream.frames(at: times, options: options, cancellation: flag) {
                            continuation.yield($0)
                        }
                        continuation.finish()
                    } catch {
                        continuation.finish(throwing: StreamFrames.mediaError(error, url: url))
                    }
                }
                continuation.onTermination = { _ in
                    flag.cancelAll()
                    task.cancel()
                }
            }
        }
        return AsyncThrowingStream { continuation in
            let task = Task {
                do {
                    try await perform { input in
                        var cache = KeyframeCache()
                        var ready: [Int: VideoFrame] = [:]
                        var next = 0
                        let order = times.indices.sorted { (times[$0], $0) < (times[$1], $1) }
                        for index in order {
                            ready[index] = try Self.frame(
                                at: times[index], input: input, options: options, cache: &cache)
                            while let frame = ready.removeValue(forKey: next) {
                                continuation.yield(frame)
                                next += 1
                            }
                        }
                    }
                    continuation.finish()
                } catch {
                    continuation.finish(throwing: error)
                }
            }
            continuation.onTermination = { _ in task.cancel() }
        }
    }

    // MARK: Work

    /// State kept across the frames of one call: the last decoded keyframe (so a batch that maps several times to
    /// one keyframe decodes it once) and one swscale context.
    struct KeyframeCache {
        var time: Double?
        var image: PixelBuffer?
        let converter = FrameConverter()
    }

    private static func frame(
        at seconds: Double, input: MediaInput, options: FrameExtractorConfiguration, cache: inout KeyframeCache
    ) throws(MediaError) -> VideoFrame {
        guard seconds.isFinite, seconds >= 0 else {
            throw MediaError(.timeOutOfRange, "the time \(seconds) s is not a position in the video", url: input.url)
        }
        if input.duration > 0, seconds > input.duration + 0.001 {
            throw MediaError(
                .timeOutOfRange,
                "the time \(seconds) s is past the end of the video (\(String(format: "%.3f", input.duration)) s)",
                url: input.url)
        }
        let converter = cache.converter
        func render(_ frame: OwnedFrame) throws(MediaError) -> PixelBuffer {
            try input.geometry.image(
                frame, fittingIn: options.maximumSize, turning: options.appliesPreferredTrackTransform,
                converter: converter)
        }
        let locator = KeyframeLocator(options)
        if !locator.decodesExactly {
            let before = try input.keyPacket(atOrBefore: seconds)
            let after = locator.looksAfter ? try input.keyPacket(atOrAfter: seconds) : nil
            let choice: OwnedPacket? =
                switch locator.pick(at: seconds, before: before.time, after: after?.time) {
                case .before: before
                case .after: after
                case nil: nil
                }
            if let choice {
                if cache.time == choice.time, let image = cache.image {
                    return VideoFrame(image: image, requestedTime: seconds, actualTime: choice.time, isKeyframe: true)
                }
                let shown = input.geometry.outputSize(fittingIn: options.maximumSize)
                let decoded = try input.decode(
                    keyPacket: choice, KeyframeDecoding.forImage(width: shown.width, of: input.geometry))
                let image = try render(decoded)
                cache.time = choice.time
                cache.image = image
                return VideoFrame(image: image, requestedTime: seconds, actualTime: decoded.time, isKeyframe: true)
            }
        }
        let decoded = try input.exactFrame(at: seconds)
        return VideoFrame(
            image: try render(decoded), requestedTime: seconds, actualTime: decoded.time, isKeyframe: decoded.isKey)
    }

    private func perform<T: Sendable>(_ body: @escaping @Sendable (MediaInput) throws -> T) async throws -> T {
        let call = counters.withLock { c -> Int in
            c.calls += 1
            return c.calls
        }
        try Task.checkCancellation()
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { continuation in
                queue.async { [self] in
                    cancellation.begin(call)
                    do {
                        let opened = try input.open(url: url, network: options.network, cancellation: cancellation)
                        opened.beginCall()
                        let result = try body(opened)
                        try opened.checkNestedFailures()
                        record(opened)
                        continuation.resume(returning: result)
                    } catch {
                        // After a failure or a cancellation the demuxer may be mid-read: start afresh next time.
                        if let opened = input.value { record(opened) }
                        counters.withLock { c in
                            c.retired = (
                                c.retired.bytes + c.live.bytes, c.retired.requests + c.live.requests,
                                c.retired.decoded + c.live.decoded
                            )
                            c.live = (0, 0, 0)
                        }
                        input.discard()
                        continuation.resume(throwing: error)
                    }
                }
            }
        } onCancel: {
            cancellation.cancel(call)
        }
    }

    private func record(_ input: MediaInput) {
        let live = (input.bytesRead, input.requestCount, input.framesDecoded)
        counters.withLock { $0.live = live }
    }
}

/// Holds the opened input. Only the extractor's serial queue touches it.
private final class InputBox: @unchecked Sendable {
    var value: MediaInput?

    func open(url: URL, network: MediaNetwork, cancellation: CancellationFlag) throws(MediaError) -> MediaInput {
        if let value { return value }
        let opened = try MediaInput(.url(url, network: network), cancellation: cancellation)
        value = opened
        return opened
    }

    func discard() { value = nil }
}
