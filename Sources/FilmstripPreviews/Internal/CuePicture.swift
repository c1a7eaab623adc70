import FilmstripFormats
import FilmstripMedia

/// Which picture shows the cue `[start, end)`: the one rule of a file's, a stream's and a live track's generation and
/// of the benchmark. Each asks it for the order of its looks and performs them on what it has (a file's index, the
/// segments around the cue), so the choice is the same whatever the source.
struct CuePicture {
    /// One look for a picture, in the rule's order.
    enum Look: Equatable {
        /// The first keyframe inside the cue (``contains(_:)``), in the cue's segment or at the start of the next.
        case keyframeInside
        /// The last keyframe at or before the cue's start.
        case keyframeBefore
        /// The exact frame shown at the cue's start (decoding forward from the keyframe before it).
        case exactFrame
    }

    /// The cue's start and end, seconds.
    let start: Double
    let end: Double

    /// The looks `mode` makes, in order; the first that finds a picture wins, and the last always finds one.
    /// `keyframe`: inside, else before (else the exact frame, where nothing comes before); `auto`: inside, else
    /// exact; `accurate`: exact.
    static func looks(_ mode: PreviewTrackConfiguration.Mode) -> [Look] {
        switch mode {
        case .keyframe: [.keyframeInside, .keyframeBefore, .exactFrame]
        case .auto: [.keyframeInside, .exactFrame]
        case .accurate: [.exactFrame]
        }
    }

    /// Whether a picture at `t` belongs to the cue (within the media time tolerance at both ends).
    func contains(_ t: Double) -> Bool {
        t >= start - MediaTime.tolerance && t < end - MediaTime.tolerance
    }
}

extension CuePicture {
    /// The key packet of `input` that shows this cue under `mode`; `nil` when the exact frame at the cue's start is
    /// the picture.
    func keyPacket(in input: MediaInput, mode: PreviewTrackConfiguration.Mode) throws(MediaError) -> OwnedPacket? {
        for look in Self.looks(mode) {
            switch look {
            case .keyframeInside:
                let key = try input.search.keyPacket(atOrAfter: start)
                if contains(key.time) { return key }
            case .keyframeBefore: return try input.search.keyPacket(atOrBefore: start)
            case .exactFrame: return nil
            }
        }
        return nil
    }
}

extension StreamSegment {
    /// The first key packet inside `cue`.
    func keyPacket(inside cue: CuePicture) -> OwnedPacket? {
        keyPacket(from: cue.start, before: cue.end)
    }
}
