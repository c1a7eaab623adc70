import FilmstripMedia
import Foundation

/// Trick play (SPEC 4.9): at a rate whose ``TrickPlayMode`` needs another source of frames (an I-frame track, or
/// reverse playback), the normal feeder is set aside (a stream's video fetching suspended) and a feeder over a
/// ``TrickPlaySource`` presents the frames; back at a normal rate, the normal feeder continues from the playhead.
/// Either switch repositions the source at the playhead, as a seek does.
extension PlaybackEngine {
    /// The trick-play mode `rate` needs for the loaded content (`nil`: the normal source).
    func trickMode(for rate: Double) -> TrickPlayMode? {
        TrickPlayMode.mode(rate: rate, hasIFrameTrack: stream?.hasIFrameTrack ?? false)
    }

    /// A new (resolved) rate: the clock's, then the source of frames it needs.
    mutating func changeRate(to rate: Double, _ player: Player) {
        execute(machine.setRate(rate, at: now), player)
        let wanted = trickMode(for: rate)
        guard wanted != trick?.mode else {
            // The same source: only whether it decodes keyframes only may change.
            feeder?.setKeyframesOnly(wanted?.keyframesOnly ?? TrickPlayMode.keyframesOnly(rate: rate))
            return
        }
        guard feeder != nil else { return }  // Nothing loaded yet: the load chooses.
        let position = machine.currentTime(at: now)
        switchFrames(to: wanted, at: position, player)
        switch machine.state.kind {
        case .play, .playing, .pausing, .paused, .buffering, .seeking, .ended:
            seek(to: position, player, byUser: false)
        default:
            // Loaded, not opened: the first frame comes from the new source.
            pending = nil
            feeder?.seek(to: position)
        }
    }

    /// After a load: trick play from `start` when the rate set before it needs it.
    mutating func startTrickPlay(at start: Double, _ player: Player) {
        guard feeder != nil, let mode = trickMode(for: player.shared.withLock({ $0.rate })) else { return }
        switchFrames(to: mode, at: start, player)
    }

    /// Makes `mode`'s feeder the one frames come from, starting at `position`.
    private mutating func switchFrames(to mode: TrickPlayMode?, at position: Double, _ player: Player) {
        pending = nil
        if let current = trick {
            retired.frames += feeder?.framesDecoded ?? 0
            retired.bytes += feeder?.bytesRead ?? 0
            feeder?.stop()
            feeder = current.parked
            trick = nil
            stream?.suspend(false)
        }
        guard let mode, let normal = feeder, let configuration else {
            feeder?.setKeyframesOnly(keyframesOnly(player))
            return
        }
        let chunks: any TrickChunks
        if let stream {
            chunks = SegmentChunks(session: stream, iFrames: mode.iFrameTrack)
        } else {
            do {
                chunks = FileChunks(
                    decoder: try VideoDecoder(url: configuration.url, options: fileOptions ?? FrameExtractorOptions()))
            } catch {
                // The normal source plays on at the rate (forward keyframes only, or paused at 0 for reverse).
                player.deliver(
                    PlayerError(
                        .decodeFailed, severity: .warning,
                        "trick play cannot open a second decoder (\(error)); the normal source plays on",
                        underlying: error as? MediaError))
                return
            }
        }
        trick = (mode, normal)
        stream?.suspend(true)
        // About two seconds of playing at the rate are decoded ahead.
        let rate = abs(machine.rate)
        feeder = FrameFeeder(
            decoder: TrickPlaySource(chunks: chunks, mode: mode, start: position), capacity: max(2, 2 * rate))
    }
}
