import CFFmpeg
import FilmstripFormats
import Foundation

/// The keyframe search over a ``MediaInput``: the key packet at or before (or after) a time, and the exact frame
/// shown at a time, each found by seeking and, while a pass finds nothing, seeking further back.
package struct KeyframeSearch {
    let input: MediaInput

    /// How one pass of ``searchBackward(from:_:)`` went.
    enum SearchPass<Found> {
        /// The answer.
        case found(Found)
        /// Nothing at or before t from where the pass started: start earlier.
        case earlier
        /// Nothing to find: stop.
        case done
    }

    /// Runs `pass` from the keyframe before `t`, and while it asks to start earlier, from 2, 6, 14 and 30 s further
    /// back, then from 0, then from the start (``rewind()``: the index's first entry, or byte 0). A seek can land
    /// after the keyframe `t` needs (dts before pts, or FFmpeg's bisection of an MPEG-TS by timestamps); the pass
    /// from the start always has an attempt left. `pass` gets where it started (seconds, or whether from the start)
    /// after the input was positioned there.
    func searchBackward<Found>(
        from t: Double, _ pass: (_ target: Double, _ fromStart: Bool) throws(MediaError) -> SearchPass<Found>
    ) throws(MediaError) -> Found? {
        var target = t
        var fromStart = false
        for attempt in 0..<7 {
            if fromStart {
                guard try input.rewind() else { return nil }
            } else {
                try input.seek(to: target)
            }
            switch try pass(target, fromStart) {
            case .found(let found): return found
            case .done: return nil
            case .earlier:
                if fromStart { return nil }
                if target > 0 {
                    target = attempt >= 4 ? 0 : max(0, target - Double(2 << attempt))
                } else {
                    fromStart = true
                }
            }
        }
        return nil
    }

    /// The key packet at or before `t`. When `t` is before the first keyframe, the first keyframe.
    package func keyPacket(atOrBefore t: Double) throws(MediaError) -> OwnedPacket {
        var firstKey: OwnedPacket?
        let found = try searchBackward(from: t) { (target, fromStart) throws(MediaError) -> SearchPass<OwnedPacket> in
            var best: OwnedPacket?
            var passFirstKey: OwnedPacket?
            while try input.readPacket() {
                let time = input.packetTime
                if input.packetIsKey {
                    if time <= t + MediaTime.tolerance {
                        best = OwnedPacket(cloning: input.packet!, time: time)
                        if input.hasIndex { break }
                        continue
                    }
                    if best == nil, passFirstKey == nil {
                        passFirstKey = OwnedPacket(cloning: input.packet!, time: time)
                    }
                    break
                } else if best != nil, time > t + MediaTime.tolerance {
                    break
                }
            }
            if let best { return .found(best) }
            if let passFirstKey, target <= 0 || fromStart { firstKey = passFirstKey }
            return .earlier
        }
        // t precedes the video: its first keyframe.
        if let key = found ?? firstKey { return key }
        throw MediaError(.decodeFailed, "no keyframe found at or before \(t) s", url: input.url)
    }

    /// The first key packet at or after `t`, else the last one before it (near the end of the video).
    package func keyPacket(atOrAfter t: Double) throws(MediaError) -> OwnedPacket {
        try input.seek(to: t)
        var previous: OwnedPacket?
        while try input.readPacket() {
            guard input.packetIsKey else { continue }
            let time = input.packetTime
            if time >= t - MediaTime.tolerance, let found = OwnedPacket(cloning: input.packet!, time: time) {
                return found
            }
            previous = OwnedPacket(cloning: input.packet!, time: time)
        }
        if let previous { return previous }
        return try keyPacket(atOrBefore: t)
    }

    /// The frame shown at `t`: the last frame whose presentation time is at or before `t` (the first frame when
    /// `t` precedes it). Decodes forward from the keyframe before `t`.
    package func exactFrame(at t: Double) throws(MediaError) -> OwnedFrame {
        var found: OwnedFrame?
        try exactFrames(at: [t]) { _, frame throws(MediaError) in found = frame }
        guard let found else { throw MediaError(.decodeFailed, "no frame decoded near \(t) s", url: input.url) }
        return found
    }

    /// How far apart two times asked together may be for the second to be decoded on from the first rather than
    /// found by a new seek.
    static let decodeOnSpan = 4.0

    /// The frame shown at each of `times` (ascending), as ``exactFrame(at:)`` finds it, handed to `each` with its
    /// index in `times` in ascending order. Times closer than ``decodeOnSpan`` to the one before are reached by
    /// decoding on, so a run of times (an animation's frames) decodes its stretch of video once.
    ///
    /// Frames that no other frame refers to (most B-frames) are not decoded while their time is more than
    /// ``MediaInput/skipMargin`` before the next time asked: none of them can be shown at that time as long as a
    /// frame within the margin is. When the frame found lies further back than the margin (a gap in the video), the
    /// time is found again with every frame decoded, so the answer is always exact.
    package func exactFrames(
        at times: [Double], each: (Int, OwnedFrame) throws(MediaError) -> Void
    ) throws(MediaError) {
        var answered = 0
        var skipping = input.skipMargin > 0
        defer { input.codec?.pointee.skip_frame = AVDISCARD_DEFAULT }
        while answered < times.count {
            let t = times[answered]
            // The first frame decoded from 0 (t precedes the video's first frame): the answer when nothing is
            // earlier.
            var earliest: OwnedFrame?
            let found: Void? = try searchBackward(from: t) {
                (target, fromStart) throws(MediaError) -> SearchPass<Void> in
                var candidate: OwnedFrame?
                var first: OwnedFrame?
                var finished = false
                var overshot = false
                let before = answered
                // A seek by timestamps (MPEG-TS, MPEG-PS) lands wherever a packet's time fits, often inside a GOP:
                // decoding starts at the first key packet, so no picture whose references precede it is shown (HEVC
                // would show them grey or broken). The start of the file is a start of decoding as it is.
                var started = fromStart
                var skipped = false
                /// Hands `frame` over as shown at the next time, unless skipped frames could be closer to it.
                func answer(_ frame: OwnedFrame) throws(MediaError) -> Bool {
                    if skipped, frame.time < times[answered] - input.skipMargin {
                        skipping = false
                        return false
                    }
                    try each(answered, frame)
                    answered += 1
                    return true
                }
                while !finished {
                    let got = try input.readPacket()
                    if got, !started {
                        guard input.packetIsKey else { continue }
                        started = true
                    }
                    let skips =
                        skipping && got && !input.packetIsKey
                        && input.packetTime < times[answered] - input.skipMargin
                    input.codec?.pointee.skip_frame = skips ? AVDISCARD_NONREF : AVDISCARD_DEFAULT
                    skipped = skipped || skips
                    let sent = try input.sendVideo(got ? input.packet : nil)
                    if sent < 0, sent != fs_averror_eagain(), got {
                        // A damaged packet: skip it, as players do.
                        continue
                    }
                    while avcodec_receive_frame(input.codec, input.frame) >= 0 {
                        input.decodedCount.add(1, ordering: .relaxed)
                        let time = input.frameTime ?? -1
                        defer { av_frame_unref(input.frame) }
                        if first == nil { first = OwnedFrame(cloning: input.frame!, time: time) }
                        // This frame is past the next times: the frame before it is shown at each of them.
                        var retry = false
                        while answered < times.count, time > times[answered] + MediaTime.tolerance {
                            guard let candidate else {
                                overshot = true
                                break
                            }
                            guard try answer(candidate) else {
                                retry = true
                                break
                            }
                        }
                        if retry || overshot || answered == times.count
                            || (answered > before && times[answered] - time > Self.decodeOnSpan)
                        {
                            finished = true
                            break
                        }
                        candidate = OwnedFrame(cloning: input.frame!, time: time)
                    }
                    if !got, !finished {
                        // The end: the last frame is shown at every time left.
                        while answered < times.count, let candidate, try answer(candidate) {}
                        finished = true
                    }
                }
                avcodec_flush_buffers(input.codec)
                if candidate != nil { return .found(()) }
                // Past t already, or nothing decoded from where the seek landed: start earlier. A key picture of an
                // open GOP (an I picture that is not an IDR and has no recovery point) gives no picture on its own
                // (FFmpeg waits for a picture it can trust), nor does a seek by timestamps that landed after the last
                // key packet before t. A file nothing in which decodes ends, from its start, in an error.
                let earlier = overshot || first == nil
                if !(earlier && target > 0), let first { earliest = first }
                return earlier ? .earlier : .done
            }
            if found == nil {
                guard let earliest else {
                    throw MediaError(.decodeFailed, "no frame decoded near \(t) s", url: input.url)
                }
                try each(answered, earliest)
                answered += 1
            }
        }
    }
}
