import FilmstripFormats
import FilmstripImaging
import FilmstripStreaming
import FilmstripSync
import Foundation

/// A file or a progressive http(s) download through one FFmpeg input, opened on first use and used on the source's
/// own serial queue, one call at a time; a failed or cancelled call closes it, the next opens it afresh.
final class FileFrameSource: FrameSource {
    let url: URL
    let options: FrameExtractorConfiguration
    private let queue = DispatchQueue(label: "filmstrip.frame-extractor")
    private let cancellation = CancellationFlag()
    /// The opened input, touched only on `queue`.
    private let input = InputBox()
    private struct Counters {
        var calls = 0
        /// Totals of inputs already closed (after failures), plus those of the open input.
        var retired = (bytes: 0, requests: 0, decoded: 0)
        var live = (bytes: 0, requests: 0, decoded: 0)
    }
    private let counters = Mutex(Counters())
    /// The keys of protected video (given, or from the licence server, once).
    private let keys: ContentKeySource

    init(url: URL, options: FrameExtractorConfiguration) {
        self.url = url
        self.options = options
        keys = ContentKeySource(keys: options.contentKeys, license: options.license)
    }

    var bytesRead: Int { counters.withLock { $0.retired.bytes + $0.live.bytes } }
    var requestCount: Int { counters.withLock { $0.retired.requests + $0.live.requests } }
    var decodedFrameCount: Int { counters.withLock { $0.retired.decoded + $0.live.decoded } }

    func duration() async throws -> Double { try await perform { $0.duration } }

    func keyframeTimes() async throws -> [Double] { try await perform { $0.indexedKeyframeTimes() } }

    func naturalSize(turning: Bool) async throws -> PixelSize {
        try await perform { input in
            let (w, h) = input.geometry.outputSize(fittingIn: nil, turning: turning)
            return PixelSize(width: w, height: h)
        }
    }

    func frames(at times: [Double], yield: @escaping @Sendable (VideoFrame) -> Void) async throws {
        let options = self.options
        try await perform { input in
            var cache = KeyframeCache()
            var ready: [Int: VideoFrame] = [:]
            var next = 0
            let order = times.indices.sorted { (times[$0], $0) < (times[$1], $1) }
            if KeyframeLocator(options).decodesExactly, times.count > 1 {
                // Exact frames close together are decoded on from one another, not each from its keyframe.
                for t in times { try Self.checkRange(t, input: input) }
                let converter = cache.converter
                try input.search.exactFrames(at: order.map { times[$0] }) { rank, decoded throws(MediaError) in
                    try input.checkCancelled()
                    let image = try input.geometry.image(
                        decoded, fittingIn: options.maximumSize, turning: options.appliesPreferredTrackTransform,
                        converter: converter)
                    let index = order[rank]
                    ready[index] = VideoFrame(
                        image: image, requestedTime: times[index], actualTime: decoded.time,
                        isKeyframe: decoded.isKey)
                    while let frame = ready.removeValue(forKey: next) {
                        yield(frame)
                        next += 1
                    }
                }
                return
            }
            for index in order {
                // A cancelled batch stops between frames, even where the next frame decodes on without a seek.
                try input.checkCancelled()
                ready[index] = try Self.frame(at: times[index], input: input, options: options, cache: &cache)
                while let frame = ready.removeValue(forKey: next) {
                    yield(frame)
                    next += 1
                }
            }
        }
    }

    /// State kept across the frames of one call: the last decoded keyframe (so a batch that maps several times to
    /// one keyframe decodes it once) and one swscale context.
    struct KeyframeCache {
        var time: Double?
        var image: PixelBuffer?
        let converter = FrameConverter()
    }

    /// Refuses a time that is not a position in the input.
    private static func checkRange(_ seconds: Double, input: MediaInput) throws(MediaError) {
        guard seconds.isFinite, seconds >= 0 else {
            throw MediaError(.timeOutOfRange, "the time \(seconds) s is not a position in the video", url: input.url)
        }
        if input.duration > 0, seconds > input.duration + 0.001 {
            throw MediaError(
                .timeOutOfRange,
                "the time \(seconds) s is past the end of the video (\(String(format: "%.3f", input.duration)) s)",
                url: input.url)
        }
    }

    private static func frame(
        at seconds: Double, input: MediaInput, options: FrameExtractorConfiguration, cache: inout KeyframeCache
    ) throws(MediaError) -> VideoFrame {
        try checkRange(seconds, input: input)
        let converter = cache.converter
        func render(_ frame: OwnedFrame) throws(MediaError) -> PixelBuffer {
            try input.geometry.image(
                frame, fittingIn: options.maximumSize, turning: options.appliesPreferredTrackTransform,
                converter: converter)
        }
        let locator = KeyframeLocator(options)
        if !locator.decodesExactly {
            let before = try input.search.keyPacket(atOrBefore: seconds)
            let after = locator.looksAfter ? try input.search.keyPacket(atOrAfter: seconds) : nil
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
        let decoded = try input.search.exactFrame(at: seconds)
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
                        let opened = try input.open(
                            url: url, network: options.network, threads: options.decoderThreads,
                            keys: keys, cancellation: cancellation)
                        opened.io.beginCall()
                        let result = try body(opened)
                        try opened.io.checkNestedFailures()
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

    func open(
        url: URL, network: MediaNetwork, threads: Int, keys: ContentKeySource, cancellation: CancellationFlag
    ) throws(MediaError) -> MediaInput {
        if let value { return value }
        let opened = try MediaInput(
            .url(url, network: network), cancellation: cancellation, decoderThreads: threads, contentKeys: keys)
        value = opened
        return opened
    }

    func discard() { value = nil }
}
