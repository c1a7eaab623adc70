package import FilmstripFormats
package import FilmstripStreaming
package import Foundation

/// One segment of a stream, demuxed from memory (its initialisation data, then its media bytes) with its own
/// demuxer and decoder, its video packets read once and placed on the presentation timeline.
///
/// Sendable because the packets are read-only after opening and everything that touches the demuxer or decoder
/// (`decode`, `exactFrame`) runs under `lock`, so workers that share a neighbouring segment never use its decoder at
/// once. `input.quarterTurns` and `input.displaySize` are fixed when the input is opened.
package final class StreamSegment: @unchecked Sendable {
    private let lock = NSLock()
    package let reference: SegmentReference
    package let input: MediaInput
    /// Video packets in decode order (times on the input's clock).
    package let packets: [OwnedPacket]
    /// Presentation time = input time + shift.
    let shift: Double
    /// Whether every media byte of the segment was read; `false` for its head, read up to the start of a video
    /// PES.
    package let isComplete: Bool
    /// Up to when the bytes read hold every frame: the segment's end when complete, else its last frame read.
    package let readEnd: Double

    package init(
        reference: SegmentReference, bytes: Data, cancellation: CancellationFlag, isComplete: Bool = true,
        contentKeys: ContentKeySource? = nil
    ) throws(MediaError) {
        self.reference = reference
        self.isComplete = isComplete
        input = try MediaInput(
            .memory(bytes, label: reference.url), cancellation: cancellation, contentKeys: contentKeys)
        packets = try input.remainingVideoPackets()
        guard let earliest = packets.map(\.time).min() else {
            throw MediaError(.invalidMedia, "the segment holds no video frames", url: reference.url)
        }
        var placement = TimelinePlacement(
            timing: reference.timing, start: reference.start, origin: input.startSeconds)
        shift = placement.place(earliest: earliest)
        readEnd = isComplete ? reference.end : (packets.map(\.time).max() ?? earliest) + shift
    }

    package func time(of packet: OwnedPacket) -> Double { packet.time + shift }

    /// The last key packet at or before `t`.
    package func keyPacket(atOrBefore t: Double) -> OwnedPacket? {
        packets.last { $0.isKey && time(of: $0) <= t + MediaTime.tolerance }
    }

    /// The first key packet at or after `t` and before `end`.
    package func keyPacket(from t: Double, before end: Double) -> OwnedPacket? {
        packets.first {
            $0.isKey && time(of: $0) >= t - MediaTime.tolerance && time(of: $0) < end - MediaTime.tolerance
        }
    }

    /// The first key packet.
    package var firstKeyPacket: OwnedPacket? { packets.first { $0.isKey } }

    /// Decodes a key packet on its own; the frame carries its presentation time, and the count is the frames the
    /// decoder produced.
    package func decode(_ key: OwnedPacket) throws(MediaError) -> (frame: OwnedFrame, decoded: Int) {
        lock.lock()
        defer { lock.unlock() }
        let before = input.framesDecoded
        let frame = try input.decode(keyPacket: key)
        frame.time += shift
        return (frame, input.framesDecoded - before)
    }

    /// The frame shown at `t` (the last at or before it), decoding forward from the keyframe before it; `nil` when
    /// the segment has no decodable frame at or before `t`.
    package func exactFrame(at t: Double) throws(MediaError) -> (frame: OwnedFrame?, decoded: Int) {
        lock.lock()
        defer { lock.unlock() }
        let before = input.framesDecoded
        let startIndex = packets.lastIndex { $0.isKey && time(of: $0) <= t + MediaTime.tolerance } ?? 0
        var candidate: OwnedFrame?
        try input.decodeFrames(packets[startIndex...]) { frame throws(MediaError) in
            frame.time += shift
            if frame.time <= t + MediaTime.tolerance {
                candidate = frame
                return true
            }
            return candidate == nil
        }
        return (candidate, input.framesDecoded - before)
    }
}
