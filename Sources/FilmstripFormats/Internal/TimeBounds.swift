/// The latest time a parser accepts, in seconds (10^9, about 31 years): past it a duration or a start is not a
/// media time, and a million such values still sum exactly in milliseconds.
enum TimeBounds {
    static let maximumSeconds = 1e9
    /// The latest start or end of a cue in a track whose times are program dates (seconds since 1970, as live
    /// tracks of an HLS stream with `EXT-X-PROGRAM-DATE-TIME` carry): 10^10, the year 2286.
    static let latestCueTime = 1e10
}

/// The largest count, sequence number, byte offset or byte length a parser accepts: 2^53, the largest integer every
/// player (JavaScript's numbers among them) holds exactly, and far past any real stream (a segment a second for 285
/// million years; 9 PB). Bounding what comes from outside here keeps every later sum (a sequence number plus a
/// segment's index, a range's start plus its length, one range after another) far from `Int64`'s end: a value past
/// it is a parse error with its line, never an arithmetic trap.
enum IntegerBounds {
    static let maximum: Int64 = 1 << 53
}

extension Int {
    /// `value` rounded toward zero and held within ±2^62 (NaN is 0): a count or index computed in floating point
    /// from outside numbers never traps when it becomes an integer, and stays far from overflowing a later sum.
    init(saturating value: Double) {
        guard value.isFinite else {
            self = value.isNaN ? 0 : (value > 0 ? 1 << 62 : -(1 << 62))
            return
        }
        self = Int(Swift.max(-4.611686018427388e18, Swift.min(4.611686018427388e18, value.rounded(.towardZero))))
    }
}

/// Error messages quote what they found, and what they found may be megabytes (an 8 MB attribute, a URI line as long
/// as the playlist): a message keeps its first 300 characters and says how much it left out.
func excerpted(_ message: String, limit: Int = 300) -> String {
    guard message.utf8.count > limit else { return message }
    let kept = message.prefix(limit)
    return kept + "… (\(message.utf8.count - kept.utf8.count) more bytes)"
}
