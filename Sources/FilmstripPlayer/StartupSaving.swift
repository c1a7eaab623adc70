import Foundation

/// What an optimized live start saves (``LiveConfiguration/optimizeLiveStartup``), estimated from the bits each start
/// fetches before its first frame and the throughput measured.
struct StartupSaving: Sendable {
    /// A usual start: the start threshold's worth of segments at the configured level.
    var usualBits: Double
    /// This start: one segment at the level it started from (the lowest).
    var optimizedBits: Double
    /// The estimate, once made.
    var seconds: Double?

    /// What an optimized live start waits for: the first segment, the newest the start rule allows at `start`,
    /// from the lowest level.
    let startupBuffer: Double

    init(opening: StreamOpening, start: Double, configuration: PlayerConfiguration) {
        let index = SegmentScheduler.firstIndex(endingAfter: start, in: opening.segments)
        startupBuffer = index.map { opening.segments[$0].duration } ?? opening.targetDuration
        let configured = configuration.streaming.startRendition
        let prebuffer = PlaybackMachine.Configuration(configuration).threshold(rebuffering: false)
        let bandwidths = opening.bandwidths.map(Double.init)
        let usual = bandwidths.indices.contains(configured) ? bandwidths[configured] : bandwidths.first ?? 0
        usualBits = usual * prebuffer
        optimizedBits = (bandwidths.indices.contains(opening.level) ? bandwidths[opening.level] : 0) * startupBuffer
    }

    /// Makes the estimate at `throughput` (bits per second), once.
    mutating func estimate(throughput: Double?) -> Double? {
        if seconds == nil, let throughput, throughput > 0 {
            seconds = max(0, usualBits - optimizedBits) / throughput
        }
        return seconds
    }
}
