import FilmstripLoading
public import Foundation

/// Measurements for `make bench` that need the media layer's internals. Not API.
@_spi(Benchmarks)
public enum MediaBenchmarks {
    /// Decodes, on one thread, the keyframe the preview-track generator would use for each start time (no scaling,
    /// no encoding): the floor under which keyframe-mode generation cannot go on one core.
    /// Returns the number of keyframes decoded and the seconds spent.
    public static func decodeKeyframes(url: URL, starts: [Double], interval: Double) throws -> (Int, Double) {
        let input = try MediaInput(
            .url(url, network: MediaNetwork(transport: DefaultTransport.shared, configuration: .init())),
            cancellation: CancellationFlag())
        let started = DispatchTime.now()
        var decoded = 0
        for start in starts {
            var key = try input.keyPacket(atOrAfter: start)
            if key.time >= start + interval { key = try input.keyPacket(atOrBefore: start) }
            _ = try input.decode(keyPacket: key)
            decoded += 1
        }
        return (decoded, Double(DispatchTime.now().uptimeNanoseconds - started.uptimeNanoseconds) / 1e9)
    }
}
