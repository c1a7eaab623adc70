import FilmstripFormats

/// Which keyframe answers a time: the one rule that the extractor (files and progressive HTTP), stream frames
/// (HLS and DASH segments) and frame thumbnails share.
///
/// Under tolerances (``FrameExtractorConfiguration/toleranceBefore`` and ``FrameExtractorConfiguration/toleranceAfter``), the
/// keyframe at or before `t` answers when it is at most `toleranceBefore` earlier (a `t` before every keyframe takes
/// the first one); the first keyframe after `t` answers instead when it is at most `toleranceAfter` later and
/// nearer than an accepted one before. With no keyframe within the tolerances (both zero, say), the exact frame at
/// `t` is decoded.
struct KeyframeLocator: Sendable, Hashable {
    var toleranceBefore: Double
    var toleranceAfter: Double

    /// The same times compare equal within this.
    static let epsilon = MediaTime.tolerance

    init(toleranceBefore: Double = .infinity, toleranceAfter: Double = 0) {
        self.toleranceBefore = toleranceBefore
        self.toleranceAfter = toleranceAfter
    }

    init(_ options: FrameExtractorConfiguration) {
        self.init(toleranceBefore: options.toleranceBefore, toleranceAfter: options.toleranceAfter)
    }

    /// Whether only the exact frame answers (no keyframe lookup at all).
    var decodesExactly: Bool { toleranceBefore == 0 && toleranceAfter == 0 }

    /// Whether a keyframe after `t` may answer (a caller looks one up only then).
    var looksAfter: Bool { toleranceAfter > 0 }

    /// The two keyframes a choice is made between.
    enum Pick: Sendable, Hashable {
        case before, after
    }

    /// Chooses between the keyframe at or before `t` (time `before`; later than `t` when `t` precedes every keyframe)
    /// and the first one after it (time `after`); `nil` when neither is within the tolerances.
    func pick(at t: Double, before: Double?, after: Double?) -> Pick? {
        var choice: (pick: Pick, distance: Double)?
        if let before, t - before <= toleranceBefore + Self.epsilon {
            choice = (.before, t - before)
        }
        if looksAfter, let after, after >= t - Self.epsilon, after - t <= toleranceAfter + Self.epsilon,
            choice.map({ after - t < $0.distance }) ?? true
        {
            choice = (.after, after - t)
        }
        return choice?.pick
    }

    /// The keyframe at or before `t` in a list of segments, `t` lying in segment `index`: in that segment, else the
    /// last keyframe of the nearest earlier segment that has one; `nil` when none has. `open` gives a segment.
    static func keyframe(
        atOrBefore t: Double, inSegment index: Int, open: (Int) async throws -> StreamSegment
    ) async throws -> (index: Int, segment: StreamSegment, packet: OwnedPacket)? {
        var searched = index
        while searched >= 0 {
            let segment = try await open(searched)
            let packet =
                searched == index ? segment.keyPacket(atOrBefore: t) : segment.packets.last(where: \.isKey)
            if let packet { return (searched, segment, packet) }
            searched -= 1
        }
        return nil
    }
}
