/// How a time is mapped to a cue.
public enum ThumbnailLookupPolicy: String, Sendable, Hashable, CaseIterable, Codable {
    /// The cue whose `[start, end)` holds the time; none in a gap. The default.
    case containing
    /// The first cue starting at or after the time, clamped to the last cue.
    case nextCue = "next"
    /// The containing cue, else the closest cue on either side (ties go to the earlier cue).
    case nearest
}

/// A search structure over sorted cue times that answers "which cue at second t" in a few dozen nanoseconds.
///
/// Holds only the start and end times (and a running maximum of the ends, so long cues that overlap later ones
/// are still found), in contiguous arrays.
public struct ThumbnailIndex: Sendable {
    private let starts: [Double]
    private let ends: [Double]
    /// `maxEnd[i]` is the largest end among cues `0...i`.
    private let maxEnd: [Double]

    /// Builds the index for cues sorted by start time.
    public init(cues: [ThumbnailCue]) {
        self.init(starts: cues.map(\.start), ends: cues.map(\.end))
    }

    /// Builds the index from start and end times (seconds), sorted by start.
    public init(starts: [Double], ends: [Double]) {
        precondition(starts.count == ends.count, "starts and ends must have the same count")
        self.starts = starts
        self.ends = ends
        var running = -Double.infinity
        self.maxEnd = ends.map { end in
            running = max(running, end)
            return running
        }
    }

    /// Number of cues.
    public var count: Int { starts.count }

    /// The index of the cue chosen for time `t` (seconds) under `policy`, or `nil`.
    public func lookup(_ t: Double, policy: ThumbnailLookupPolicy = .containing) -> Int? {
        guard !t.isNaN, !starts.isEmpty else { return nil }
        return starts.withUnsafeBufferPointer { starts in
            ends.withUnsafeBufferPointer { ends in
                if policy == .nextCue {
                    // lower = number of cues with start < t: the first cue starting at or after t.
                    var low = 0
                    var high = starts.count
                    while low < high {
                        let mid = (low &+ high) >> 1
                        if starts[mid] < t { low = mid &+ 1 } else { high = mid }
                    }
                    return min(low, starts.count - 1)
                }
                // upper = number of cues with start <= t
                var low = 0
                var high = starts.count
                while low < high {
                    let mid = (low &+ high) >> 1
                    if starts[mid] <= t { low = mid &+ 1 } else { high = mid }
                }
                let upper = low
                if let containing = containingCue(upper: upper, t: t, ends: ends) { return containing }
                guard policy == .nearest else { return nil }
                let before = upper > 0 ? upper - 1 : nil
                let after = upper < starts.count ? upper : nil
                switch (before, after) {
                case (let b?, let a?):
                    return t - maxEnd[b] <= starts[a] - t ? latestEnding(upTo: b) : a
                case (let b?, nil): return latestEnding(upTo: b)
                case (nil, let a?): return a
                case (nil, nil): return nil
                }
            }
        }
    }

    @inline(__always)
    private func containingCue(upper: Int, t: Double, ends: UnsafeBufferPointer<Double>) -> Int? {
        guard upper > 0 else { return nil }
        var i = upper - 1
        if t < ends[i] { return i }
        // A cue before may still cover t when cues overlap: walk back only while that is possible.
        while i > 0, maxEnd[i - 1] > t {
            i -= 1
            if t < ends[i] { return i }
        }
        return nil
    }

    /// Among cues `0...i`, the last one whose end is the running maximum (the cue that ends closest before t).
    private func latestEnding(upTo i: Int) -> Int {
        var j = i
        while j > 0, ends[j] != maxEnd[i] { j -= 1 }
        return j
    }
}
