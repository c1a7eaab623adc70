import FilmstripFormats
import FilmstripImaging
import FilmstripLoading
import FilmstripMedia
public import Foundation

/// Measurements for `make bench` that need the media layer's internals. Not API.
@_spi(Benchmarks)
public enum MediaBenchmarks {
    /// Decodes, on one thread, the keyframe the preview-track generator would use for each start time (no scaling,
    /// no encoding): the floor under which keyframe-mode generation cannot go on one core. `skippingDeblocking`
    /// decodes them as thumbnails do (``KeyframeDecoding/preview``).
    /// Returns the number of keyframes decoded and the seconds spent.
    public static func decodeKeyframes(
        url: URL, starts: [Double], interval: Double, skippingDeblocking: Bool = false
    ) throws -> (Int, Double) {
        let input = try open(url)
        let started = DispatchTime.now()
        var decoded = 0
        for start in starts {
            _ = try input.decode(keyPacket: key(in: input, at: start, interval: interval), decoding(skippingDeblocking))
            decoded += 1
        }
        return (decoded, Double(DispatchTime.now().uptimeNanoseconds - started.uptimeNanoseconds) / 1e9)
    }

    /// What skipping the deblocking costs in picture: each start's keyframe decoded both ways and scaled to
    /// `width` (the height from the aspect), compared as RGB. Returns the lowest and the mean PSNR in dB (an
    /// identical tile counts as 99 dB).
    public static func previewQuality(
        url: URL, starts: [Double], interval: Double, width: Int
    ) throws -> (minimum: Double, mean: Double) {
        let input = try open(url)
        let size = input.geometry.outputSize(fittingIn: PixelSize(width: width, height: 100_000))
        let converter = FrameConverter()
        var values: [Double] = []
        for start in starts {
            let key = try key(in: input, at: start, interval: interval)
            // Each decoded frame is held while it is converted (its pointer lives as long as the value).
            let fullFrame = try input.decode(keyPacket: key, .full)
            let full = try converter.image(fullFrame.pointer, width: size.width, height: size.height, quarterTurns: 0)
            let previewFrame = try input.decode(keyPacket: key, .preview)
            let preview = try converter.image(
                previewFrame.pointer, width: size.width, height: size.height, quarterTurns: 0)
            values.append(min(99, preview.psnr(against: full) ?? 0))
            withExtendedLifetime((fullFrame, previewFrame)) {}
        }
        return (values.min() ?? 0, values.reduce(0, +) / Double(max(1, values.count)))
    }

    private static func open(_ url: URL) throws -> MediaInput {
        try MediaInput(
            .url(url, network: MediaNetwork(transport: DefaultTransport.shared, configuration: .init())),
            cancellation: CancellationFlag())
    }

    /// The keyframe generation decodes for the cue at `start` (keyframe mode, the default).
    private static func key(in input: MediaInput, at start: Double, interval: Double) throws -> OwnedPacket {
        let cue = CuePicture(start: start, end: start + interval)
        guard let key = try cue.keyPacket(in: input, mode: .keyframe) else {
            throw MediaError(.decodeFailed, "no keyframe for the cue at \(start) s")
        }
        return key
    }

    private static func decoding(_ skipping: Bool) -> KeyframeDecoding { skipping ? .preview : .full }
}
