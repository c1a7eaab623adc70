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
    public enum Action: Sendable, Hashable {
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
        /// Wait until `seconds` are buffered ahead, the source ends or `until` passes, whichever is first.
        case awaitBuffer(seconds: Double, until: Double)
    }

    /// What the buffers hold, as the executor sees it at a step.
    public struct Buffer: Sendable, Hashable {
        /// The time of the next decoded frame the executor holds, if any.
        public var frame: Double?
        /// Whether the source has nothing more to decode (the end of the content, until a seek).
        public var ended: Bool
        /// Seconds buffered ahead (decoded frames for files; fetched segments, once a frame is decoded, for streams).
        public var seconds: Double
        /// Whether the rest of the content is buffered, however short it is.
        public var complete: Bool

        /// Creates an observation.
        public init(frame: Double?, ended: Bool = false, seconds: Double = 0, complete: Bool = false) {
            self.frame = frame
            self.ended = ended
            self.seconds = seconds
            self.complete = complete || ended
        }
    }

    /// The former name of ``Configuration``.
    @available(*, deprecated, renamed: "Configuration")
    public typealias Settings = Configuration

    /// The settings the decisions use.
    public struct Configuration: Sendable, Hashable {
        /// Seconds buffered before playback starts.
        public var minPrebufferTime: Double
        /// Seconds buffered before playback resumes after a stall.
        public var minRebufferTime: Double
        /// The most the forward buffer holds: thresholds above it are lowered to it (at least 0.5 s).
        public var maxPrebufferTime: Double
        /// Whether autoplay may start playback.
        public var autoplay: AutoplayPolicy
        /// State timeouts; `nil` disables them.
        public var stateTimeouts: StateTimeoutConfiguration?

        /// The defaults of ``PlayerConfiguration``.
        public init() {
            self.init(PlayerConfiguration(with: URL(fileURLWithPath: "/")))
        }

        /// Configuration from a player configuration.
        public init(_ configuration: PlayerConfiguration) {
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
    // MARK: Statistics

    /// The statistics the machine knows at `now`: state, position, rate, frames presented and dropped, startup
    /// time and stalls. The executor adds what it measures (decoded frames, bytes, buffer, network).
    public func statistics(at now: Double) -> PlayerStats {
        var stats = PlayerStats(
            state: state.kind, position: currentTime(at: now), duration: clock.duration, playbackRate: rate,
            audioMuted: muted || rate < 0 || rate > 2, decodedFrames: 0, presentedFrames: counters.presented,
            droppedFrames: counters.dropped, bytesRead: 0, startupTime: counters.startupTime)
        stats.rebufferCount = counters.rebuffers
        stats.rebufferTime = counters.rebufferTime + (counters.stallStarted.map { now - $0 } ?? 0)
        return stats
    }

    /// The playhead at `now`: the clock while playing, else the last position.
    public func currentTime(at now: Double) -> Double {
        clock.running ? clock.time(at: now) : position
    }

    /// The clock to publish: running while playing, else stopped at the playhead.
    public var publishedClock: PlaybackClock {
        var published = clock
        if !published.running { published.media = position }
        return published
    }
}

extension PlaybackMachine {
    /// With audio, the audio clock is the master: while playing, a playback clock more than `tolerance` from
    /// `audioTime` (the media time being heard) is re-anchored to it, so the picture follows the sound.
    public mutating func follow(audioClock audioTime: Double, at now: Double, tolerance: Double = 0.02) -> [Action] {
        guard state.kind == .playing, clock.running, abs(clock.time(at: now) - audioTime) > tolerance else { return [] }
        anchor(at: audioTime, now: now)
        return [.clockChanged]
    }
}

extension PlaybackMachine {
    /// How long a seek waits for its first frame before showing `buffering`.
    public static let seekGrace = 0.25
    /// How long `play` waits for the start threshold before showing `buffering`.
    public static let startGrace = 0.2
    /// A frame later than this (two intervals at 25 fps) is dropped, unless it is the first since the clock started.
    public static let lateness = 0.08

    /// What the statistics count.
    struct Counters: Sendable {
        var presented = 0
        var dropped = 0
        var rebuffers = 0
        var rebufferTime = 0.0
        var stallStarted: Double?
        var openedAt: Double?
        var startupTime: Double?
        var lastStatistics = -Double.infinity
    }
}
