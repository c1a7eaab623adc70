public import Foundation

/// Reads what audio tests write and measures it: a 16-bit PCM WAV reader, the dominant frequency (an FFT), loudness
/// per window.
public enum AudioAnalysis {
    /// A WAV file's first channel as floats in -1...1, with its rate and channel count.
    public struct Track: Sendable {
        public var sampleRate: Int
        public var channels: Int
        /// The first channel.
        public var samples: [Float]
        /// Seconds.
        public var duration: Double { Double(samples.count) / Double(sampleRate) }
    }

    public struct Malformed: Error, CustomStringConvertible {
        public var description: String
    }

    /// Reads a 16-bit PCM WAV file.
    public static func readWAV(_ url: URL) throws -> Track {
        let data = try Data(contentsOf: url)
        func u32(_ at: Int) -> Int {
            Int(data[at]) | Int(data[at + 1]) << 8 | Int(data[at + 2]) << 16 | Int(data[at + 3]) << 24
        }
        func u16(_ at: Int) -> Int { Int(data[at]) | Int(data[at + 1]) << 8 }
        guard data.count >= 12, data.prefix(4) == Data("RIFF".utf8), data[8..<12] == Data("WAVE".utf8) else {
            throw Malformed(description: "not a RIFF/WAVE file")
        }
        var offset = 12
        var rate = 0
        var channels = 0
        var bits = 0
        while offset + 8 <= data.count {
            let id = String(decoding: data[offset..<(offset + 4)], as: UTF8.self)
            let size = u32(offset + 4)
            let body = offset + 8
            if id == "fmt " {
                channels = u16(body + 2)
                rate = u32(body + 4)
                bits = u16(body + 14)
            } else if id == "data" {
                guard bits == 16, channels > 0 else { throw Malformed(description: "not 16-bit PCM") }
                let end = min(data.count, body + size)
                let frames = (end - body) / (2 * channels)
                var samples = [Float](repeating: 0, count: frames)
                for i in 0..<frames {
                    let at = body + i * 2 * channels
                    samples[i] = Float(Int16(bitPattern: UInt16(u16(at)))) / 32768
                }
                return Track(sampleRate: rate, channels: channels, samples: samples)
            }
            offset = body + size + (size & 1)
        }
        throw Malformed(description: "no data chunk")
    }

    /// The frequency with the most energy in `samples` (Hz), from an FFT of the largest power-of-two window (up to
    /// 65,536 samples) in the middle of the signal; 0 for silence.
    public static func dominantFrequency(_ samples: [Float], sampleRate: Int) -> Double {
        var n = 1
        while n * 2 <= min(samples.count, 65_536) { n *= 2 }
        guard n >= 256 else { return 0 }
        let start = (samples.count - n) / 2
        var real = (0..<n).map { i -> Double in
            // A Hann window keeps leakage from hiding the peak.
            let w = 0.5 - 0.5 * cos(2 * Double.pi * Double(i) / Double(n - 1))
            return Double(samples[start + i]) * w
        }
        var imag = [Double](repeating: 0, count: n)
        fft(&real, &imag)
        var best = 0
        var bestPower = 0.0
        for k in 1..<(n / 2) {
            let power = real[k] * real[k] + imag[k] * imag[k]
            if power > bestPower {
                bestPower = power
                best = k
            }
        }
        return bestPower < 1e-6 ? 0 : Double(best) * Double(sampleRate) / Double(n)
    }

    /// How `played` matches `reference` (both one channel at one rate): the lag (samples `played` is behind the
    /// reference) that best aligns `window` samples from the reference's `at`, searched within `maxLag`, and the
    /// signal-to-noise ratio (dB) over everything the two hold in common once aligned.
    public static func match(
        _ played: [Float], reference: [Float], at: Int, window: Int = 8_192, maxLag: Int = 2_400
    ) -> (lag: Int, snr: Double) {
        guard at >= 0, at + window <= reference.count else { return (0, -.infinity) }
        let lag = played.withUnsafeBufferPointer { p in
            reference.withUnsafeBufferPointer { r in
                var best = (lag: 0, score: -Double.infinity)
                for lag in -maxLag...maxLag where at + lag >= 0 && at + lag + window <= p.count {
                    var score = 0.0
                    for i in 0..<window { score += Double(r[at + i]) * Double(p[at + lag + i]) }
                    if score > best.score { best = (lag, score) }
                }
                return best.lag
            }
        }
        var signal = 0.0
        var noise = 0.0
        for i in max(0, -lag)..<min(reference.count, played.count - lag) {
            let a = Double(reference[i])
            let d = a - Double(played[i + lag])
            signal += a * a
            noise += d * d
        }
        return (lag, noise == 0 ? .infinity : 10 * log10(signal / noise))
    }

    /// The RMS level of each consecutive window of `seconds`.
    public static func levels(_ samples: [Float], sampleRate: Int, window seconds: Double) -> [Double] {
        let size = max(1, Int(seconds * Double(sampleRate)))
        return stride(from: 0, to: samples.count - size + 1, by: size).map { start in
            let sum = samples[start..<(start + size)].reduce(0.0) { $0 + Double($1) * Double($1) }
            return (sum / Double(size)).squareRoot()
        }
    }

    /// In-place iterative radix-2 FFT (`real.count` a power of two).
    private static func fft(_ real: inout [Double], _ imag: inout [Double]) {
        let n = real.count
        var j = 0
        for i in 1..<n {
            var bit = n >> 1
            while j & bit != 0 {
                j ^= bit
                bit >>= 1
            }
            j |= bit
            if i < j {
                real.swapAt(i, j)
                imag.swapAt(i, j)
            }
        }
        var length = 2
        while length <= n {
            let angle = -2 * Double.pi / Double(length)
            for start in stride(from: 0, to: n, by: length) {
                for k in 0..<(length / 2) {
                    let (c, s) = (cos(angle * Double(k)), sin(angle * Double(k)))
                    let a = start + k
                    let b = a + length / 2
                    let tr = real[b] * c - imag[b] * s
                    let ti = real[b] * s + imag[b] * c
                    real[b] = real[a] - tr
                    imag[b] = imag[a] - ti
                    real[a] += tr
                    imag[a] += ti
                }
            }
            length <<= 1
        }
    }
}
