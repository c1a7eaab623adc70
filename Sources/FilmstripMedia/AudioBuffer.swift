/// The PCM an ``AudioBuffer`` holds: interleaved 32-bit float samples at a sample rate, in a channel count (the
/// default layout for that count: 1 mono, 2 stereo, 6 5.1).
public struct AudioFormat: Sendable, Hashable, CustomStringConvertible {
    /// Samples per second per channel.
    public var sampleRate: Int
    /// Channels, interleaved.
    public var channels: Int

    /// A format; the rate is clamped to 8,000...384,000 and the channels to 1...8.
    public init(sampleRate: Int = 48_000, channels: Int = 2) {
        self.sampleRate = min(max(sampleRate, 8_000), 384_000)
        self.channels = min(max(channels, 1), 8)
    }

    /// 48 kHz stereo.
    public static let standard = AudioFormat()

    public var description: String { "\(sampleRate) Hz, \(channels) channel\(channels == 1 ? "" : "s")" }
}

/// Interleaved float PCM that starts at a presentation time.
public struct AudioBuffer: Sendable {
    /// The format of ``samples``.
    public var format: AudioFormat
    /// Presentation time of the first sample, in seconds on the content's timeline.
    public var time: Double
    /// `frameCount × channels` samples, interleaved, nominally in -1...1.
    public var samples: [Float]

    /// A buffer of `samples` (interleaved, a whole number of frames) at `time`.
    public init(format: AudioFormat, time: Double, samples: [Float]) {
        self.format = format
        self.time = time
        self.samples = samples
    }

    /// `seconds` of silence at `time`.
    public static func silence(_ format: AudioFormat, time: Double, seconds: Double) -> AudioBuffer {
        let frames = max(0, Int((seconds * Double(format.sampleRate)).rounded()))
        return AudioBuffer(format: format, time: time, samples: [Float](repeating: 0, count: frames * format.channels))
    }

    /// Sample frames (samples per channel).
    public var frameCount: Int { samples.count / max(1, format.channels) }

    /// Seconds of audio.
    public var duration: Double { Double(frameCount) / Double(format.sampleRate) }

    /// The presentation time just after the last sample.
    public var end: Double { time + duration }

    /// Whether every sample is zero.
    public var isSilent: Bool { samples.allSatisfy { $0 == 0 } }

    /// The part from `start` to `end` (presentation times), cut at whole frames; `nil` when nothing is left.
    public func trimmed(from start: Double, to end: Double = .infinity) -> AudioBuffer? {
        let rate = Double(format.sampleRate)
        let first = max(0, min(frameCount, Int(((start - time) * rate).rounded())))
        let last = end.isFinite ? max(first, min(frameCount, Int(((end - time) * rate).rounded()))) : frameCount
        guard last > first else { return nil }
        if first == 0, last == frameCount { return self }
        let channels = format.channels
        return AudioBuffer(
            format: format, time: time + Double(first) / rate,
            samples: Array(samples[(first * channels)..<(last * channels)]))
    }
}
