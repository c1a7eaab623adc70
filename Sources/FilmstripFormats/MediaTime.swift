/// Media times in seconds, as `Double`s read from timescales, playlists and decoders.
public enum MediaTime {
    /// Two media times closer than this (a microsecond) are the same time: a timestamp converted from a timescale,
    /// a playlist's decimal duration and a sum of segment durations agree only to rounding. Every "at or before t",
    /// "inside the segment" and "past the end" test compares with it.
    public static let tolerance = 1e-6
}
