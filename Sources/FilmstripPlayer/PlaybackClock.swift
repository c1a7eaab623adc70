/// The playback clock as a value: media time = `media + (now - wall) * rate` while it runs, `media` while it does
/// not. `now` is in seconds on the player's injected clock.
public struct PlaybackClock: Sendable, Hashable {
    /// The clock time at which the clock was last anchored (or slewed onto the audio clock).
    public var wall = 0.0
    /// The media time at `wall` (while stopped: the media time).
    public var media = 0.0
    /// The rate the media time moves at (the playback rate times the live catch-up factor).
    public var rate = 1.0
    /// Whether the media time moves.
    public var running = false
    /// The content's duration (0 when unknown or live): a running clock stops there.
    public var duration = 0.0
    /// The earliest media time (the start of what may be played): a clock running backwards stops there.
    public var start = 0.0

    /// Creates a stopped clock at 0.
    public init() {}

    /// The media time at `now`.
    public func time(at now: Double) -> Double {
        guard running else { return media }
        let time = media + (now - wall) * rate
        if rate < 0 { return max(time, min(start, media)) }
        return duration > 0 ? min(time, duration) : time
    }

    /// When (in clock time) the media time reaches `mediaTime`, at the current rate (not 0; backwards for a negative
    /// rate).
    public func due(_ mediaTime: Double) -> Double { wall + (mediaTime - media) / rate }
}
