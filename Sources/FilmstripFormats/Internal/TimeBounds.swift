/// The latest time a parser accepts, in seconds (10^9, about 31 years): past it a duration or a start is not a
/// media time, and a million such values still sum exactly in milliseconds.
enum TimeBounds {
    static let maximumSeconds = 1e9
}
