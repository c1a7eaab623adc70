package import CFFmpeg

/// An `AVFrame` owned by Swift, freed on deinit.
package final class OwnedFrame {
    package let pointer: UnsafeMutablePointer<AVFrame>
    /// Presentation time in seconds from the start of the stream (for stream segments, on the presentation
    /// timeline once mapped).
    var time: Double
    let isKey: Bool

    init?(cloning frame: UnsafeMutablePointer<AVFrame>, time: Double) {
        guard let copy = av_frame_clone(frame) else { return nil }
        pointer = copy
        self.time = time
        isKey = fs_frame_is_key(frame) != 0
    }

    deinit {
        var frame: UnsafeMutablePointer<AVFrame>? = pointer
        av_frame_free(&frame)
    }
}

/// An `AVPacket` owned by Swift, freed on deinit.
package final class OwnedPacket {
    let pointer: UnsafeMutablePointer<AVPacket>
    /// Presentation time in seconds from the start of the stream.
    package let time: Double
    /// Whether the packet holds a keyframe.
    package let isKey: Bool
    /// Byte offset of the packet in its input (-1 when the demuxer does not know), and its size.
    package let position: Int64
    package let size: Int

    init?(cloning packet: UnsafeMutablePointer<AVPacket>, time: Double) {
        guard let copy = av_packet_clone(packet) else { return nil }
        pointer = copy
        self.time = time
        isKey = fs_packet_is_key(packet) != 0
        position = packet.pointee.pos
        size = Int(packet.pointee.size)
    }

    deinit {
        var packet: UnsafeMutablePointer<AVPacket>? = pointer
        av_packet_free(&packet)
    }
}

/// FFmpeg's message for an error code.
func ffmpegMessage(_ code: Int32) -> String {
    var buffer = [CChar](repeating: 0, count: 256)
    fs_error_string(code, &buffer, buffer.count)
    let bytes = buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }
    return String(decoding: bytes, as: UTF8.self)
}
