import FilmstripLoading
import FilmstripMedia
import FilmstripStreaming

/// The engine's errors as the player reports them.
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
            case .protectedContent?: .drmFailed
            case .timedOut? where media?.underlying is ClearKeyLicense.Failure: .drmFailed
            case .inputUnavailable?, .timedOut?: .sourceUnavailable
            case .decodeFailed?: .decodeFailed
            default: .sourceInvalid
            }
        self.init(type, severity: .fatal, media?.description ?? "\(error)", underlying: media)
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
