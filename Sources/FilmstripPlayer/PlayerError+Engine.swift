import FilmstripLoading
import FilmstripMedia

/// The engine's errors as the player reports them, and what a stream adds to its statistics.
extension PlayerError {
    /// A decoder's or a source's failure as the player reports it: fatal, with the media error kept.
    init(failure error: any Error) {
        // A stream's own failure is already described.
        if let stream = error as? PlayerError {
            self = stream
            return
        }
        let media = error as? MediaError
        let type: PlayerError.ErrorType =
            switch media?.kind {
            case .inputUnavailable?, .timedOut?: .sourceUnavailable
            case .decodeFailed?: .decodeFailed
            default: .sourceInvalid
            }
        self.init(type, severity: .fatal, media?.description ?? "\(error)", underlying: media)
    }
}

extension PlayerStats {
    /// What a stream adds: its buffer ahead of the position, its network figures, and, live (`live` is the window),
    /// the latency behind the window's end.
    mutating func add(_ stream: StreamSession, live: ClosedRange<Double>?) {
        bufferLength = stream.buffered(from: position).seconds
        let network = stream.statistics
        bitrate = network.bitrate
        bandwidthEstimate = network.bandwidthEstimate
        segmentsLoaded = network.segmentsLoaded
        rendition = network.rendition
        isLive = live != nil
        if let live { liveLatency = max(0, live.upperBound - position) }
    }
}

extension PlayerError {
    /// A negative `rate` asked of a live stream or of audio-only content, played at 0 instead.
    init(backwards rate: Double, live: Bool) {
        let what = live ? "a live stream" : "audio-only content"
        self.init(
            .playbackRateClamped, severity: .warning,
            "the rate \(rate) was clamped to 0: \(what) does not play backwards")
    }
}
