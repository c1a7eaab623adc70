import FilmstripStreaming

extension StreamSession {
    /// Whether the presentation has an I-frame track (an HLS I-frame playlist, a DASH trick-mode AdaptationSet).
    var hasIFrameTrack: Bool {
        opened.withLock { opened in
            opened?.presentation.periods.contains { period in
                period.tracks.contains { $0.kind == .iFrame && !$0.renditions.isEmpty }
            } ?? false
        }
    }

    /// Trick play is on (the video lane fetches nothing) or off again (the engine then seeks, which restarts it).
    func suspend(_ on: Bool) {
        shared.withLock { $0.suspended = on }
        wake.signal()
        audioWake.signal()
    }
}
