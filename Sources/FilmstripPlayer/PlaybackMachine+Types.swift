import Foundation

/// Whether `open(autoplay: true)` may start playback (SPEC 4.2), as a browser or an app's policy decides.
public enum AutoplayPolicy: String, Sendable, Hashable, Codable, CaseIterable {
    /// Autoplay starts playback.
    case allowed
    /// Autoplay starts playback muted (``Player/isMuted`` becomes true, and statistics report `audioMuted`).
    case mutedOnly = "muted_only"
    /// Autoplay is refused: the player goes `play` -> `pausing`, shows the first frame and waits paused; an
    /// `autoplay_refused` warning says why. An explicit ``Player/play()`` still plays.
    case denied
}

extension PlaybackMachine {
    /// What the executor carries out.
    enum Action: Sendable, Hashable {
        /// The state changed: publish it with the clock and call `onState`; with `statistics`, publish statistics
        /// as of the change with it (``statistics(at:)`` plus what the executor measures) and call `onStats`.
        case changed(previous: PlayerState, current: PlayerState, statistics: Bool)
        /// Deliver a warning or an error to `onError`.
        case report(PlayerError)
        /// Position the source: the next frame is the first at or after the time.
        case seekSource(Double)
        /// Show the frame the executor holds (its time was given in ``Buffer/frame``), then let it go.
        case present
        /// Let the held frame go without showing it (it is late).
        case drop
        /// The forward buffer ran dry while playing (a stream fetches the next segment at once).
        case starved
        /// Release the source (decoder, fetcher).
        case release
        /// Publish statistics (``statistics(at:)`` plus what the executor measures).
        case publishStatistics
        /// The playback clock changed without a state change: publish ``publishedClock``.
        case clockChanged
        /// Nothing to do before `until` (clock seconds) unless a command arrives.
        case wait(until: Double)
        /// Nothing to do before `until` (clock seconds) unless a command arrives or the buffers change: the
        /// executor is woken by whatever changes them (a frame decoded, a segment fetched, the end, a failure).
        case awaitBuffer(until: Double)
    }

    /// What the buffers hold, as the executor sees it at a step.
    struct Buffer: Sendable, Hashable {
        /// The time of the next decoded frame the executor holds, if any.
        var frame: Double?
        /// Whether the source has nothing more to decode (the end of the content, until a seek).
        var ended: Bool
        /// Seconds buffered ahead (decoded frames for files; fetched segments, once a frame is decoded, for streams).
        var seconds: Double
        /// Whether the rest of the content is buffered, however short it is.
        var complete: Bool

        /// Creates an observation.
        init(frame: Double?, ended: Bool = false, seconds: Double = 0, complete: Bool = false) {
            self.frame = frame
            self.ended = ended
            self.seconds = seconds
            self.complete = complete || ended
        }
    }

    /// The settings the decisions use.
    struct Configuration: Sendable, Hashable {
        /// Seconds buffered before playback starts.
        var minPrebufferTime: Double
        /// Seconds buffered before playback resumes after a stall.
        var minRebufferTime: Double
        /// The most the forward buffer holds: thresholds above it are lowered to it (at least 0.5 s).
        var maxPrebufferTime: Double
        /// Whether autoplay may start playback.
        var autoplay: AutoplayPolicy
        /// State timeouts; `nil` disables them.
        var stateTimeouts: StateTimeoutConfiguration?

        /// The defaults of ``PlayerConfiguration``.
        init() {
            self.init(PlayerConfiguration(with: URL(fileURLWithPath: "/")))
        }

        /// Configuration from a player configuration.
        init(_ configuration: PlayerConfiguration) {
            minPrebufferTime = configuration.minPrebufferTime
            minRebufferTime = configuration.minRebufferTime
            maxPrebufferTime = configuration.maxPrebufferTime
            autoplay = configuration.autoplayPolicy
            stateTimeouts = configuration.stateTimeouts
        }

        /// A start or resume threshold, capped by what the forward buffer may hold, so a small buffer never waits
        /// for more than it can keep.
        func threshold(rebuffering: Bool) -> Double {
            min(rebuffering ? minRebufferTime : minPrebufferTime, max(0.5, maxPrebufferTime))
        }
    }
}

extension PlaybackMachine {
    // MARK: Reading

    /// The playback clock.
    var clock: PlaybackClock { playhead.clock }
    /// The playback rate asked for (the clock runs at this times ``catchUp``).
    var rate: Double { playhead.rate }
    /// The live catch-up factor (1 unless speeding up to the live edge).
    var catchUp: Double { playhead.catchUp }

    /// The statistics the machine knows at `now`: state, position, rate, frames presented and dropped, startup
    /// time and stalls. The executor adds what it measures (decoded frames, bytes, buffer, network).
    func statistics(at now: Double) -> PlayerStats {
        let counters = playhead.counters
        var stats = PlayerStats(
            state: state.kind, position: currentTime(at: now), duration: clock.duration, playbackRate: rate,
            audioMuted: muted || rate < 0 || rate > 2, decodedFrames: 0, presentedFrames: counters.presented,
            droppedFrames: counters.dropped, bytesRead: 0, startupTime: counters.startupTime)
        stats.rebufferCount = counters.rebuffers
        stats.rebufferTime = counters.rebufferTime + (counters.stallStarted.map { now - $0 } ?? 0)
        return stats
    }

    /// The playhead at `now`: the clock while playing, else the last position.
    func currentTime(at now: Double) -> Double { playhead.time(at: now) }

    /// The clock to publish: running while playing, else stopped at the playhead.
    var publishedClock: PlaybackClock { playhead.published }

    /// How long a seek waits for its first frame before showing `buffering`.
    static let seekGrace = 0.25
    /// How long `play` waits for the start threshold before showing `buffering`.
    static let startGrace = 0.2
    /// A frame later than this (two intervals at 25 fps) is dropped, unless it is the first since the clock started.
    static let lateness = Playhead.lateness
}

extension PlaybackMachine {
    // MARK: Settings (they never change the state)

    /// A new playback rate (already resolved by the engine's rate policy).
    mutating func setRate(_ rate: Double, at now: Double) -> [Action] {
        playhead.setRate(rate, catchUp: playhead.catchUp, at: now)
        return [.clockChanged]
    }

    /// The live catch-up factor (1 stops catching up).
    mutating func setCatchUp(_ factor: Double, at now: Double) -> [Action] {
        playhead.setRate(playhead.rate, catchUp: factor, at: now)
        return [.clockChanged]
    }

    /// New buffer settings (``Player/minPrebufferTime`` and the like) from now on.
    mutating func reconfigure(_ settings: Configuration) {
        self.settings.minPrebufferTime = settings.minPrebufferTime
        self.settings.minRebufferTime = settings.minRebufferTime
        self.settings.maxPrebufferTime = settings.maxPrebufferTime
    }

    /// The content's duration, once a stream learns it.
    mutating func setDuration(_ duration: Double) { playhead.setDuration(duration) }

    /// The start of what may be played (a live window's first segment; 0 by default): reverse playback pauses there.
    mutating func setStart(_ start: Double) { playhead.setStart(start) }

    /// Mutes or unmutes the player's audio.
    mutating func setMuted(_ muted: Bool) { self.muted = muted }

    /// With audio, the audio clock is the master: while playing, a playback clock more than `tolerance` from
    /// `audioTime` (the media time being heard) is re-anchored to it, a nearer one slewed a tenth of the way, so
    /// the picture follows the sound (see ``Playhead/follow(audioTime:at:tolerance:)``).
    mutating func follow(audioClock audioTime: Double, at now: Double, tolerance: Double = 0.02) -> [Action] {
        guard state.kind == .playing, playhead.follow(audioTime: audioTime, at: now, tolerance: tolerance) else {
            return []
        }
        return [.clockChanged]
    }

    /// The start or resume threshold; the first start of an optimized live start waits for its first segment only.
    func threshold(rebuffering: Bool) -> Double {
        let threshold = settings.threshold(rebuffering: rebuffering)
        guard !rebuffering, let startupBuffer else { return threshold }
        return min(threshold, startupBuffer)
    }

    func refusal(_ message: String) -> Action {
        .report(PlayerError(.invalidStateTransition, severity: .warning, message))
    }
}
