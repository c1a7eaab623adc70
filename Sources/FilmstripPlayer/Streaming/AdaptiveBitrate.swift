import Foundation

/// Estimates network throughput from completed downloads (for rendition choice and CMCD `mtp`).
///
/// Two exponentially weighted averages over download time, a fast one (half-life 3 s) and a slow one (9 s), of the
/// *time per bit*, so one slow download weighs as much as the time it took: averaging bits per second instead lets
/// a few instant loopback or cache hits hide a throttled link for many segments. The estimate is the lower of the two
/// averages, so it drops quickly and rises with care. Downloads under 16 KB say more about latency than bandwidth
/// and are not sampled.
struct BandwidthEstimator: Sendable, Hashable {
    private var fast = Average(halfLife: 3)
    private var slow = Average(halfLife: 9)
    /// Samples taken.
    private(set) var sampleCount = 0

    /// Creates an estimator with no samples.
    init() {}

    /// Records a download of `bytes` that took `seconds`.
    mutating func add(bytes: Int, seconds: Double) {
        guard bytes >= 16 * 1024, seconds > 0 else { return }
        let secondsPerBit = max(seconds, 1e-4) / Double(bytes * 8)
        fast.add(secondsPerBit, weight: seconds)
        slow.add(secondsPerBit, weight: seconds)
        sampleCount += 1
    }

    /// The estimate in bits per second, `nil` before the first sample.
    var bitsPerSecond: Double? {
        guard sampleCount > 0, let f = fast.value, let s = slow.value else { return nil }
        return 1 / max(f, s)
    }

    private struct Average: Sendable, Hashable {
        let halfLife: Double
        var estimate = 0.0
        var totalWeight = 0.0

        init(halfLife: Double) { self.halfLife = halfLife }

        mutating func add(_ value: Double, weight: Double) {
            let alpha = 1 - pow2(-weight / halfLife)
            estimate = alpha * value + (1 - alpha) * estimate
            totalWeight += weight
        }

        /// Corrected for the zero start, as the weights so far would have it.
        var value: Double? {
            guard totalWeight > 0 else { return nil }
            return estimate / (1 - pow2(-totalWeight / halfLife))
        }
    }
}

private func pow2(_ x: Double) -> Double { exp2(x) }

/// Chooses a rendition from the bandwidth estimate, with hysteresis so it does not flap; a switch is committed
/// when the first segment of the new rendition arrives, not when it is chosen.
///
/// - Up: to the best rendition whose bitrate is at most 70% of the estimate, and only once at least
///   `minimumSegmentsBetweenSwitches` segments arrived since the last switch.
/// - Down: at once, when the committed rendition needs more than 90% of the estimate, to the best one within 80% of
///   it (the lowest when none fits).
/// - Between the two bands it stays, so an estimate that wobbles around one bitrate does not switch back and forth.
///
/// ``next(estimate:)`` names the rendition to fetch from; a different one is a *pending* switch. The engine reports
/// each arrived segment with ``arrived(from:)`` (the first one of the pending rendition commits it) and a switch that
/// could not be made (its playlist or first segment failed) with ``switchFailed()``, which keeps the committed
/// rendition and waits the usual spacing before trying upwards again.
struct RenditionSelector: Sendable, Hashable {
    /// The bitrates of the renditions (bits per second), as the playlist lists them.
    let bitrates: [Int]
    /// Fraction of the estimate an up-switch may use.
    var upFraction = 0.7
    /// Above this fraction of the estimate the current rendition is too expensive.
    var downThreshold = 0.9
    /// Fraction of the estimate a down-switch aims for.
    var downFraction = 0.8
    /// Segments to receive between two up-switches.
    var minimumSegmentsBetweenSwitches = 2
    /// The committed rendition (an index into ``bitrates``): the one whose segments are arriving.
    private(set) var current: Int
    /// A switch chosen but not yet committed: its first segment has not arrived.
    private(set) var pending: Int?
    private var segmentsSinceSwitch = Int.max / 2

    /// A selector starting at `initial` (by default the first listed, as RFC 8216 recommends clients do).
    init(bitrates: [Int], initial: Int = 0) {
        self.bitrates = bitrates
        current = bitrates.indices.contains(initial) ? initial : 0
    }

    /// The rendition to fetch the next segment from: the committed one, or the target of a (pending) switch.
    mutating func next(estimate: Double?) -> Int {
        guard let estimate, bitrates.count > 1 else { return pending ?? current }
        let now = Double(bitrates[current])
        if now > downThreshold * estimate {
            let target = best(within: downFraction * estimate) ?? lowest
            pending = bitrates[target] < bitrates[current] ? target : nil
            return pending ?? current
        }
        if segmentsSinceSwitch >= minimumSegmentsBetweenSwitches, let target = best(within: upFraction * estimate),
            bitrates[target] > bitrates[current]
        {
            pending = target
        } else {
            // Between the bands: stay, and drop a pending switch the estimate no longer supports.
            pending = nil
        }
        return pending ?? current
    }

    /// A segment of `rendition` arrived. The first one of a pending switch commits it.
    mutating func arrived(from rendition: Int) {
        if rendition == pending {
            current = rendition
            pending = nil
            segmentsSinceSwitch = 0
        }
        segmentsSinceSwitch += 1
    }

    /// The pending switch could not be made: the committed rendition stays, and an up-switch waits the spacing.
    mutating func switchFailed() {
        pending = nil
        segmentsSinceSwitch = 0
    }

    private var lowest: Int { bitrates.indices.min { bitrates[$0] < bitrates[$1] } ?? 0 }

    private func best(within budget: Double) -> Int? {
        bitrates.indices.filter { Double(bitrates[$0]) <= budget }.max { bitrates[$0] < bitrates[$1] }
    }
}
