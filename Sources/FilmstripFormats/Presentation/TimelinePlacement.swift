/// Places a run of segments' decoded times on the presentation timeline: the one reading of
/// ``SegmentReference/Timing`` that every decoder of segments (frames, trick play, audio, the player) shares.
///
/// A decoder reports times on its own clock, which counts from `origin` in media time (0 for one that reports
/// media timestamps as they are; the container's start time for one that counts from the start). Presentation
/// time = decoder time + ``shift``:
/// - ``SegmentReference/Timing/mediaTime(offset:)`` (DASH): the media timestamps are the timeline, moved by the
///   period's offset, so the shift is `offset + origin`, known before anything is decoded.
/// - ``SegmentReference/Timing/segmentStart`` (HLS): the run's earliest frame or sample is at its first segment's
///   start, so the shift is fixed by the first time the run decodes (``place(earliest:)``).
public struct TimelinePlacement: Sendable, Hashable {
    /// The presentation start of the run's first segment.
    public let start: Double
    /// The media time the decoder's clock counts from.
    public let origin: Double
    /// Decoder time + shift = presentation time; `nil` until it is known.
    public private(set) var shift: Double?

    /// Placement for a run that starts with a segment of `timing` at presentation time `start`.
    public init(timing: SegmentReference.Timing, start: Double, origin: Double = 0) {
        self.start = start
        self.origin = origin
        switch timing {
        case .mediaTime(let offset): shift = offset + origin
        case .segmentStart: shift = nil
        }
    }

    /// The shift, fixed on the first call by the run's earliest decoder time when it was not known.
    public mutating func place(earliest: Double) -> Double {
        if let shift { return shift }
        let fixed = start - earliest
        shift = fixed
        return fixed
    }

    /// The shift for media timestamps as they are (decoder time + origin), once known: what renditions that share
    /// the media clock (an audio track beside the video) add to their own media times.
    public var mediaShift: Double? { shift.map { $0 - origin } }
}
