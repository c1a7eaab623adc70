/// When a live track is fetched again: the manifest's own cadence, decided as a value so tests drive it with a
/// test clock.
///
/// - HLS (RFC 8216 6.3.4): one target duration after a reload that changed the playlist, half of one after a reload
///   that did not.
/// - DASH: every `minimumUpdatePeriod` (at least half a second).
/// - A sidecar track (WebVTT or JSON loaded as live): the configured interval.
///
/// A failed reload is tried again after the usual delay, doubled per failure in a row, up to four times it.
public struct LiveRefreshSchedule: Sendable, Hashable {
    /// What sets the cadence.
    public enum Cadence: Sendable, Hashable {
        /// An HLS playlist's target duration, seconds.
        case playlist(targetDuration: Double)
        /// An MPD's `minimumUpdatePeriod`, seconds.
        case manifest(minimumUpdatePeriod: Double)
        /// A sidecar track's configured interval, seconds.
        case sidecar(interval: Double)
    }

    /// What sets the cadence.
    public let cadence: Cadence
    /// Failed reloads in a row.
    public private(set) var failures = 0

    /// Creates a schedule.
    public init(_ cadence: Cadence) { self.cadence = cadence }

    /// The delay before the first reload, after the initial load.
    public var first: Duration { .seconds(base) }

    private var base: Double {
        switch cadence {
        case .playlist(let target): max(0.5, target)
        case .manifest(let period): max(0.5, period)
        case .sidecar(let interval): max(0.5, interval)
        }
    }

    /// A reload succeeded; `changed` says whether it brought anything new. Returns the delay before the next one.
    public mutating func loaded(changed: Bool) -> Duration {
        failures = 0
        if case .playlist = cadence, !changed { return .seconds(base / 2) }
        return .seconds(base)
    }

    /// A reload failed. Returns the delay before trying again.
    public mutating func failed() -> Duration {
        failures += 1
        return .seconds(base * Double(1 << min(failures, 2)))
    }
}
