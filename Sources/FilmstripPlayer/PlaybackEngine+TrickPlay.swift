import FilmstripMedia
import Foundation

/// Trick play (SPEC 4.9): at a rate whose ``TrickPlayMode`` needs another source of frames (an I-frame track, or
/// reverse playback), the normal feeder is set aside (a stream's video fetching suspended) and a feeder over a
/// ``TrickPlaySource`` presents the frames; back at a normal rate, the normal feeder continues from the playhead.
/// Either switch repositions the source at the playhead, as a seek does.
extension PlaybackEngine {
    /// The trick-play mode `rate` needs for the loaded content (`nil`: the normal source). Live streams and
    /// audio-only content play forward only, from their normal source (``forwardRate(_:_:)``).
    func trickMode(for rate: Double) -> TrickPlayMode? {
        guard !isLive, !isAudioOnly else { return nil }
        return TrickPlayMode.mode(rate: rate, hasIFrameTrack: stream?.hasIFrameTrack ?? false)
    }

    /// Whether the loaded stream is audio alone (no picture: trick play has no frames to show).
    var isAudioOnly: Bool { stream?.audioOnly.load(ordering: .relaxed) ?? fileAudioOnly }

    /// A live stream or audio-only content does not play backwards: a negative rate becomes 0 (paused in place),
    /// with a warning. (Forward, audio-only content plays every rate from its normal source, muted above 2x.)
    func forwardRate(_ rate: Double, _ player: Player) -> Double {
        guard rate < 0, isLive || isAudioOnly else { return rate }
        player.deliver(PlayerError(backwards: rate, live: isLive))
        return 0
    }

    /// A new (resolved) rate: the clock's, then the source of frames it needs.
    mutating func changeRate(to requested: Double, _ player: Player) {
        let rate = forwardRate(requested, player)
        if rate != requested { player.shared.withLock { $0.rate = rate } }
        execute(machine.setRate(rate, at: now), player)
        let wanted = trickMode(for: rate)
        guard wanted != frames.trick?.mode else {
            // The same source: only whether it decodes keyframes only, and trick play's lookahead, may change.
            feeder?.setKeyframesOnly(wanted?.keyframesOnly ?? TrickPlayMode.keyframesOnly(rate: rate))
            if frames.trick != nil, let configuration {
                feeder?.setCapacity(configuration.trickCapacity(at: machine.rate))
            }
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
            seekSource(to: position)
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
        if frames.endTrick() {
            // The fetcher restarts at the playhead before it resumes (never at where it stopped).
            stream?.seek(to: position)
            stream?.suspend(false)
        }
        guard let mode, feeder != nil, let configuration else {
            feeder?.setKeyframesOnly(player.asksKeyframesOnly)
            return
        }
        let chunks: any TrickChunks
        if let stream {
            chunks = SegmentChunks(session: stream, iFrames: mode.iFrameTrack)
        } else {
            do {
                chunks = FileChunks(
                    decoder: try VideoDecoder(
                        url: configuration.url, options: fileOptions ?? FrameExtractorConfiguration()))
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
        stream?.suspend(true)
        weak let weakPlayer = player
        frames.beginTrick(
            mode,
            with: FrameFeeder(
                decoder: TrickPlaySource(chunks: chunks, mode: mode, start: position),
                capacity: configuration.trickCapacity(at: machine.rate), activity: clock.activity,
                changed: { weakPlayer?.bufferChanged() }))
    }
}
