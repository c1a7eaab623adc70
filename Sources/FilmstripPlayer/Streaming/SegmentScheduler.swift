import FilmstripFormats

/// The streaming session's fetch decisions as a value: which segment comes next, whether it starts a new run for the
/// decoder, and when to wait because the forward buffer is full or a live stream has nothing newer yet.
///
/// The scheduler follows one cursor, the end of what is queued (``bufferEnd``); the next segment is the first whose
/// span reaches past it in whatever rendition is current, so a rendition switch or a reload never repeats or skips a
/// segment. The forward buffer holds at most `maxBuffer` seconds ahead of the playhead.
///
/// ```swift
/// var scheduler = SegmentScheduler(maxBuffer: 30)
/// scheduler.seek(to: 42, in: segments)
/// if case .fetch(let segment, let newRun) = scheduler.next(playhead: 42, segments: segments, rendition: "720p") {
///     // fetch it, then:
///     scheduler.fetched(segment, rendition: "720p")
/// }
/// ```
struct SegmentScheduler: Sendable, Hashable {
    /// What the session should do next.
    enum Action: Sendable, Hashable {
        /// Fetch this segment; with `newRun` its initialisation section goes first and a new decoder starts.
        case fetch(SegmentReference, newRun: Bool)
        /// The forward buffer is full: wait for the playhead to move.
        case waitForRoom
        /// A live stream has nothing after the buffer end yet: wait for the next reload or availability.
        case waitForSegments
        /// Everything up to the end is queued.
        case finished
    }

    /// Seconds the forward buffer may hold ahead of the playhead.
    var maxBuffer: Double {
        didSet { maxBuffer = max(1, maxBuffer) }
    }
    /// The end of what is queued, on the presentation timeline.
    private(set) var bufferEnd = 0.0
    private var last: (rendition: String, segment: SegmentReference)?

    /// Creates a scheduler; the buffer holds at least one second.
    init(maxBuffer: Double) {
        self.maxBuffer = max(1, maxBuffer)
    }

    /// Starts over at the segment that holds `time` (the first one before the list, the last one past it); returns
    /// that segment's start, where playback begins.
    @discardableResult
    mutating func seek(to time: Double, in segments: [SegmentReference]) -> Double {
        last = nil
        bufferEnd = Self.start(of: time, in: segments)
        return bufferEnd
    }

    /// The start of the segment that holds `time` (the first one before the list, the last one past it); `time`
    /// itself when there are no segments.
    static func start(of time: Double, in segments: [SegmentReference]) -> Double {
        let index = segments.lastIndex(where: { $0.start <= time + MediaTime.tolerance }) ?? 0
        return segments.indices.contains(index) ? segments[index].start : time
    }

    /// The next step for a playhead at `playhead`, given the current rendition's segments.
    func next(playhead: Double, segments: [SegmentReference], rendition: String, isLive: Bool) -> Action {
        if bufferEnd - playhead >= maxBuffer { return .waitForRoom }
        guard let index = Self.firstIndex(endingAfter: bufferEnd, in: segments) else {
            return isLive ? .waitForSegments : .finished
        }
        let segment = segments[index]
        return .fetch(segment, newRun: startsRun(segment, rendition: rendition))
    }

    /// `segment` of `rendition` is queued.
    mutating func fetched(_ segment: SegmentReference, rendition: String) {
        bufferEnd = segment.end
        last = (rendition, segment)
    }

    /// `segment` was given up: the buffer end moves past it and the next segment starts a new run.
    mutating func skipped(_ segment: SegmentReference) {
        bufferEnd = segment.end
        last = nil
    }

    /// What becomes of a segment that still fails after its retries.
    enum Failure: Sendable, Hashable {
        /// It was the first segment of a rendition switch: the switch is abandoned and the segment is fetched again
        /// from the committed rendition (nothing is skipped for a switch that did not happen).
        case abandonSwitch
        /// The stream cannot go on: the server cannot be reached, or the policy fails on a missing segment.
        case fail
        /// It is skipped: the buffer end moves past it, and the next segment starts a new run.
        case skip
    }

    /// `segment` still failed after its retries: abandon the switch it began (`switching`), fail the stream (the
    /// server is `unreachable`, or the policy says so), or skip it (the scheduler moves past it).
    mutating func failed(
        _ segment: SegmentReference, switching: Bool, unreachable: Bool,
        policy: StreamingConfiguration.MissingSegmentPolicy
    ) -> Failure {
        if switching { return .abandonSwitch }
        if unreachable || policy == .fail { return .fail }
        skipped(segment)
        return .skip
    }

    /// Whether `segment` cannot continue the decoder's current run.
    func startsRun(_ segment: SegmentReference, rendition: String) -> Bool {
        guard let last else { return true }
        return last.rendition != rendition || last.segment.initialization != segment.initialization
            || last.segment.discontinuitySequence != segment.discontinuitySequence
            || last.segment.number + 1 != segment.number || abs(last.segment.end - segment.start) > 0.1
    }

    /// The first segment whose span ends after `time` (binary search; segments are sorted by start).
    static func firstIndex(endingAfter time: Double, in segments: [SegmentReference]) -> Int? {
        var low = 0
        var high = segments.count
        while low < high {
            let mid = (low + high) / 2
            if segments[mid].end > time + 1e-3 { high = mid } else { low = mid + 1 }
        }
        return low < segments.count ? low : nil
    }

    static func == (a: SegmentScheduler, b: SegmentScheduler) -> Bool {
        a.maxBuffer == b.maxBuffer && a.bufferEnd == b.bufferEnd && a.last?.rendition == b.last?.rendition
            && a.last?.segment == b.last?.segment
    }

    func hash(into hasher: inout Hasher) {
        hasher.combine(maxBuffer)
        hasher.combine(bufferEnd)
        hasher.combine(last?.segment)
    }
}
