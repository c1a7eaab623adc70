import CFFmpeg

/// Plays audio faster or slower while keeping its pitch (libavfilter's `atempo`), for playback rates from 1/16 to 2
/// (below 0.5 through a chain of halvings).
///
/// Feed buffers in order with ``process(_:)``; each call returns what the filter has ready (it holds a little, so
/// the first output comes a few milliseconds behind). Not thread-safe.
public final class AudioTempo {
    /// The rates a tempo filter takes.
    public static let rates = 0.0625...2.0
    /// The tempo factor.
    public let rate: Double
    public let format: AudioFormat
    private var graph: UnsafeMutablePointer<AVFilterGraph>?
    private var source: UnsafeMutablePointer<AVFilterContext>?
    private var sink: UnsafeMutablePointer<AVFilterContext>?
    private var pts: Int64 = 0
    /// Media time of the first sample not yet given out.
    private var outputMedia: Double?
    private var scratch: [Float] = []

    /// A filter for `format` at `rate`; `nil` when `rate` is outside ``rates`` or FFmpeg cannot build the filter.
    public init?(format: AudioFormat, rate: Double) {
        guard Self.rates.contains(rate) else { return nil }
        self.rate = rate
        self.format = format
        guard
            let made = fs_tempo_graph(
                Int32(format.sampleRate), Int32(format.channels), rate, &source, &sink)
        else { return nil }
        graph = made
    }

    deinit { avfilter_graph_free(&graph) }

    /// The audio the filter still holds, at the end of the input (the filter takes no more afterwards).
    public func drain() -> AudioBuffer? {
        guard let source, outputMedia != nil else { return nil }
        fs_tempo_push(source, nil, 0, Int32(format.channels), Int32(format.sampleRate), pts)
        return pull()
    }

    /// The media time of the first sample not yet given out, on a linear mapping of the output from the first input
    /// (`nil` before any input): what was fed beyond it is held in the filter.
    public var emittedUntil: Double? { outputMedia }

    /// Feeds `buffer` and returns the audio ready so far at the new tempo (possibly empty). The result's time is the
    /// media time its first sample came from.
    public func process(_ buffer: AudioBuffer) -> AudioBuffer? {
        guard buffer.format == format, let source else { return nil }
        if outputMedia == nil { outputMedia = buffer.time }
        let pushed = buffer.samples.withUnsafeBufferPointer { samples in
            fs_tempo_push(
                source, samples.baseAddress, Int32(buffer.frameCount), Int32(format.channels),
                Int32(format.sampleRate), pts)
        }
        guard pushed >= 0 else { return nil }
        pts += Int64(buffer.frameCount)
        return pull(startingAt: buffer.time)
    }

    private func pull(startingAt fallback: Double = 0) -> AudioBuffer? {
        guard let sink else { return nil }
        var out: [Float] = []
        let capacity = 16_384
        if scratch.count < capacity * format.channels {
            scratch = [Float](repeating: 0, count: capacity * format.channels)
        }
        while true {
            let got = scratch.withUnsafeMutableBufferPointer { buffer in
                fs_tempo_pull(sink, buffer.baseAddress, Int32(capacity), Int32(format.channels))
            }
            guard got > 0 else { break }
            out += scratch[0..<(Int(got) * format.channels)]
        }
        let start = outputMedia ?? fallback
        let result = AudioBuffer(format: format, time: start, samples: out)
        // Each output second covers `rate` media seconds.
        outputMedia = start + result.duration * rate
        return result
    }
}
