public import FilmstripFormats
public import FilmstripImaging
public import FilmstripLoading
public import FilmstripStreaming
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
    /// Keys for video protected with Common Encryption (`cenc` or `cbcs` in fMP4, files and HLS or DASH streams),
    /// by key id; held in memory only. A protected video without its key fails with
    /// ``MediaError/Kind/protectedContent``. Default: none.
    public var contentKeys = ContentKeys()
    /// A ClearKey licence server asked for the key of each key id ``contentKeys`` does not hold (once per key id
    /// and extractor). A licence that fails (an HTTP error, no answer within its timeout, no key for the id) is a
    /// ``MediaError/Kind/protectedContent`` error (``MediaError/Kind/timedOut`` for a timeout). Default: none.
    public var license: ClearKeyLicense?
    /// Threads the decoder of a file uses (frame threading). Default 1: a server decoding many files at once keeps
    /// every core busy that way; more makes one long run of frames (an animation) sooner.
    public var decoderThreads = 1
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
    /// Where the frames come from: one FFmpeg input, or the streaming layer for HLS and DASH presentations.
    private let source: any FrameSource

    /// Creates an extractor; the input is opened on first use.
    public init(url: URL, options: FrameExtractorConfiguration = FrameExtractorConfiguration()) {
        self.url = url
        self.options = options
        source =
            StreamFrames.isManifest(url)
            ? StreamFrameSource(url: url, options: options) : FileFrameSource(url: url, options: options)
    }

    /// Bytes read so far: received over HTTP for remote inputs (every `Range` response body), read from disk for
    /// local files.
    public var bytesRead: Int { source.bytesRead }
    /// HTTP requests made so far.
    public var requestCount: Int { source.requestCount }
    /// Frames the decoder has produced so far.
    public var decodedFrameCount: Int { source.decodedFrameCount }

    /// The duration of the video in seconds (for a live stream, the end of what is available now).
    public func duration() async throws -> Double { try await source.duration() }

    /// The keyframe times of a file with an index (MP4, MKV), ascending, read from the index alone (no decoding);
    /// empty for inputs without one (MPEG-TS files, streams).
    public func keyframeTimes() async throws -> [Double] { try await source.keyframeTimes() }

    /// The display size of the video (after sample aspect ratio and, if applied, rotation).
    public func naturalSize() async throws -> PixelSize {
        try await source.naturalSize(turning: options.appliesPreferredTrackTransform)
    }

    /// The frame for `seconds` under the tolerances.
    ///
    /// - Throws: ``MediaError``: ``MediaError/Kind/timeOutOfRange`` past the end, and the kinds for unreadable,
    ///   damaged or video-less inputs.
    public func image(at seconds: Double) async throws -> VideoFrame {
        let result = Mutex<VideoFrame?>(nil)
        try await source.frames(at: [seconds]) { frame in result.withLock { $0 = frame } }
        guard let frame = result.withLock({ $0 }) else { throw MediaError(.decodeFailed, "no frame", url: url) }
        return frame
    }

    /// Frames for several times, yielded in the order asked. Times are visited in ascending order and each needed
    /// keyframe is decoded once. Cancelling the task that iterates stops the work at once, even while frames decoded
    /// ahead wait to be taken.
    public func images(at times: [Double]) -> AsyncThrowingStream<VideoFrame, any Error> {
        let source = self.source
        let (frames, continuation) = AsyncThrowingStream<VideoFrame, any Error>.makeStream()
        let work = Task {
            do {
                try await source.frames(at: times) { continuation.yield($0) }
                continuation.finish()
            } catch {
                continuation.finish(throwing: error)
            }
        }
        continuation.onTermination = { _ in work.cancel() }
        let taken = TakenFrames(frames.makeAsyncIterator(), work: work)
        return AsyncThrowingStream { try await taken.next() }
    }
}

/// A batch's frames as its one consumer takes them: a consumer whose task is cancelled gets no more (the frames
/// decoded ahead are dropped) and the work is cancelled. `AsyncThrowingStream(unfolding:)` calls ``next()`` one at
/// a time, from the consumer's task.
private final class TakenFrames: @unchecked Sendable {
    private var iterator: AsyncThrowingStream<VideoFrame, any Error>.Iterator
    private let work: Task<Void, Never>

    init(_ iterator: AsyncThrowingStream<VideoFrame, any Error>.Iterator, work: Task<Void, Never>) {
        self.iterator = iterator
        self.work = work
    }

    deinit { work.cancel() }

    func next() async throws -> VideoFrame? {
        guard !Task.isCancelled else {
            work.cancel()
            return nil
        }
        return try await iterator.next()
    }
}

/// Where a ``FrameExtractor``'s frames come from. Each source visits the times in ascending order, decodes each
/// needed keyframe once, and stops promptly when its task is cancelled; its errors are ``MediaError``s.
protocol FrameSource: Sendable {
    /// Bytes read, requests made and frames decoded so far.
    var bytesRead: Int { get }
    var requestCount: Int { get }
    var decodedFrameCount: Int { get }
    /// The duration in seconds (a live stream: the end of what is available now).
    func duration() async throws -> Double
    /// A file index's keyframe times; empty where there is no index.
    func keyframeTimes() async throws -> [Double]
    /// The display size, turned as the display matrix asks when `turning`.
    func naturalSize(turning: Bool) async throws -> PixelSize
    /// The frames for `times`, handed to `yield` in the order asked.
    func frames(at times: [Double], yield: @escaping @Sendable (VideoFrame) -> Void) async throws
}
