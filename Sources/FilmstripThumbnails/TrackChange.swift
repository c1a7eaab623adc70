/// A change to a live track's cues, reported by ``TrackThumbnails/changes()``.
public struct TrackChange: Sendable, Hashable {
    /// Cues now.
    public var cueCount: Int
    /// Cues that appeared.
    public var added: Int
    /// Cues that left the window.
    public var removed: Int
    /// The window now: the first cue's start to the last cue's end, seconds.
    public var window: ClosedRange<Double>?
}
