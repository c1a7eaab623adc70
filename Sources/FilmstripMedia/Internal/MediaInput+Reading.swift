import CFFmpeg
import FilmstripFormats
import FilmstripLoading
import FilmstripStreaming
import FilmstripSync
import Foundation

/// Reading, seeking and decoding a ``MediaInput``: packets, keyframe decodes and sequential playback (the keyframe
/// search and exact frames are ``KeyframeSearch``).
extension MediaInput {
    func seconds(_ timestamp: Int64) -> Double { timeline.seconds(timestamp) }

    func timestamp(_ seconds: Double) -> Int64 { timeline.timestamp(seconds) }

    func checkCancelled() throws(MediaError) {
        if cancellation.isCancelled { throw MediaError(.cancelled, "cancelled", url: url) }
    }

    /// Reads the next packet of the video stream into `packet`; false at the end of the input.
    func readPacket() throws(MediaError) -> Bool {
        while true {
            try checkCancelled()
            av_packet_unref(packet)
            let result = av_read_frame(format, packet)
            if result == fs_averror_eof() {
                audio.drain()
                return false
            }
            if result < 0 { throw readFailure(result) }
            if packet!.pointee.stream_index == streamIndex {
                try decryptPacket(required: true)
                return true
            }
            // Sound without its key is left as it is: only the picture is needed here.
            if (try? decryptPacket(required: false)) != nil { _ = audio.receive(packet!) }
        }
    }

    func readFailure(_ code: Int32) -> MediaError { io.failure(code, doing: "read") }

    /// Sends a video packet (`nil`: the end) to the decoder. A decrypted packet the decoder rejects means the key is
    /// not the content's: that is a ``MediaError/Kind/protectedContent`` error, never a concealed picture.
    func sendVideo(_ packet: UnsafeMutablePointer<AVPacket>?) throws(MediaError) -> Int32 {
        let sent = avcodec_send_packet(codec, packet)
        if sent < 0, sent != fs_averror_eagain(), sent != fs_averror_eof(), decrypts {
            throw MediaError(
                .protectedContent,
                "the key given does not decrypt the video: the decoder rejects the decrypted pictures "
                    + "(\(ffmpegMessage(sent)))", url: url, ffmpegCode: sent)
        }
        return sent
    }

    /// Decrypts `packet` in place when the demuxer marked it protected (see ``PacketDecryption``); a decrypted
    /// video packet makes later decoding errors mean a wrong key.
    func decryptPacket(required: Bool) throws(MediaError) {
        if try PacketDecryption.decrypt(packet!, keys: contentKeys, url: url, required: required), required {
            decrypts = true
        }
    }

    var packetTime: Double {
        let p = packet!.pointee
        let ts = p.pts != fs_nopts_value() ? p.pts : p.dts
        return ts == fs_nopts_value() ? -1 : seconds(ts)
    }

    var packetIsKey: Bool { fs_packet_is_key(packet) != 0 }

    /// Seeks to the keyframe at or before `t` (by the demuxer's notion, which may compare dts) and resets the
    /// decoder.
    func seek(to t: Double) throws(MediaError) {
        try checkCancelled()
        var result = av_seek_frame(format, streamIndex, timestamp(max(0, t)), AVSEEK_FLAG_BACKWARD)
        if result < 0 {
            result = avformat_seek_file(format, streamIndex, Int64.min, timestamp(max(0, t)), Int64.max, 0)
        }
        if result < 0 { throw readFailure(result) }
        resetDecoders()
        // Sequential decoding resumes at a key packet too (see KeyframeSearch.exactFrame(at:)).
        awaitingKey = true
        // An index that gives the keyframe's place and size (MP4): over HTTP, one request of exactly those bytes.
        if let bytes = ContainerFacts.keyframeBytes(stream, atOrBefore: timestamp(max(0, t))) { io.expectRead(bytes) }
    }

    /// The keyframe search over this input: ``KeyframeSearch``.
    package var search: KeyframeSearch { KeyframeSearch(input: self) }

    /// The keyframe times of an indexed container (MP4, MKV), ascending, from its index alone; empty without one.
    func indexedKeyframeTimes() -> [Double] {
        let count = avformat_index_get_entries_count(stream)
        var times: [Double] = []
        times.reserveCapacity(Int(count) / 10)
        for i in 0..<count {
            let ts = fs_index_keyframe_timestamp(stream, i)
            if ts != Int64.min { times.append(seconds(ts)) }
        }
        return times.sorted()
    }

    /// How far before a time asked for an exact frame frames no other refers to may go undecoded: three frame
    /// durations at the stream's average rate (at least 0.1 s); 0, never, when the rate is unknown.
    var skipMargin: Double {
        let rate = stream.pointee.avg_frame_rate
        guard rate.num > 0, rate.den > 0 else { return 0 }
        return max(0.1, 3 * Double(rate.den) / Double(rate.num))
    }

    /// Seconds of the stream's start (its first timestamp), on the stream's own clock.
    var startSeconds: Double { timeline.startSeconds }

    /// Every remaining packet of the video stream, in decode order (for a segment held in memory).
    func remainingVideoPackets(limit: Int = 100_000) throws(MediaError) -> [OwnedPacket] {
        var packets: [OwnedPacket] = []
        while try readPacket() {
            let p = packet!.pointee
            guard p.pts != fs_nopts_value() || p.dts != fs_nopts_value() else { continue }
            guard let copy = OwnedPacket(cloning: packet!, time: packetTime) else {
                throw MediaError(.decodeFailed, "out of memory for a packet", url: url)
            }
            packets.append(copy)
            guard packets.count <= limit else {
                throw MediaError(.invalidMedia, "a segment with more than \(limit) video packets", url: url)
            }
        }
        return packets
    }

    /// Decodes `packets` in order from a flushed decoder and hands each frame (in presentation order) to `body`
    /// until it returns false; the decoder is flushed again afterwards.
    func decodeFrames(
        _ packets: ArraySlice<OwnedPacket>, _ body: (OwnedFrame) throws(MediaError) -> Bool
    ) throws(MediaError) {
        avcodec_flush_buffers(codec)
        defer { avcodec_flush_buffers(codec) }
        var index = packets.startIndex
        while true {
            try checkCancelled()
            if index < packets.endIndex {
                let sent = try sendVideo(packets[index].pointer)
                index += 1
                if sent < 0, sent != fs_averror_eagain() { continue }  // a damaged packet: skip it, as players do
            } else if index == packets.endIndex {
                avcodec_send_packet(codec, nil)
                index += 1
            } else {
                // Drained.
            }
            while avcodec_receive_frame(codec, frame) >= 0 {
                decodedCount.add(1, ordering: .relaxed)
                defer { av_frame_unref(frame) }
                guard let owned = OwnedFrame(cloning: frame!, time: frameTime ?? -1) else { continue }
                if !(try body(owned)) { return }
            }
            if index > packets.endIndex { return }
        }
    }

    /// Decodes one key packet on its own: send it, drain the decoder, take the frame, reset. A `.preview` decode
    /// skips the in-loop deblocking filter (H.264, HEVC): no later frame references this picture, and the image
    /// made from it is shrunk enough that the filter's work does not show (``KeyframeDecoding``).
    package func decode(
        keyPacket key: OwnedPacket, _ decoding: KeyframeDecoding = .full
    ) throws(MediaError) -> OwnedFrame {
        try checkCancelled()
        avcodec_flush_buffers(codec)
        codec?.pointee.skip_loop_filter = decoding == .preview ? AVDISCARD_ALL : AVDISCARD_DEFAULT
        defer { codec?.pointee.skip_loop_filter = AVDISCARD_DEFAULT }
        // A keyframe before an MP4 edit list's start (pre-roll) is marked to be decoded and not shown: decoded on
        // its own, its picture is the one wanted.
        key.pointer.pointee.flags &= ~AV_PKT_FLAG_DISCARD
        var result = try sendVideo(key.pointer)
        if result < 0 {
            throw MediaError(.decodeFailed, "the decoder refused the keyframe: \(ffmpegMessage(result))", url: url)
        }
        avcodec_send_packet(codec, nil)
        var decoded: OwnedFrame?
        while true {
            result = avcodec_receive_frame(codec, frame)
            if result < 0 { break }
            decodedCount.add(1, ordering: .relaxed)
            if decoded == nil { decoded = OwnedFrame(cloning: frame!, time: frameTime ?? key.time) }
            av_frame_unref(frame)
        }
        avcodec_flush_buffers(codec)
        guard let decoded else {
            throw MediaError(.decodeFailed, "the keyframe at \(key.time) s did not decode", url: url)
        }
        return decoded
    }

    var frameTime: Double? {
        let f = frame!.pointee
        let ts = f.best_effort_timestamp != fs_nopts_value() ? f.best_effort_timestamp : f.pts
        return ts == fs_nopts_value() ? nil : seconds(ts)
    }

    /// The next frame in presentation order for sequential playback; `nil` at the end of the input.
    func nextFrame() throws(MediaError) -> OwnedFrame? {
        while true {
            try checkCancelled()
            if keyframesOnly {
                guard try readPacket() else { return nil }
                guard packetIsKey, let key = OwnedPacket(cloning: packet!, time: packetTime) else { continue }
                guard let decoded = try? decode(keyPacket: key) else { continue }
                return decoded
            }
            if avcodec_receive_frame(codec, frame) >= 0 {
                decodedCount.add(1, ordering: .relaxed)
                defer { av_frame_unref(frame) }
                return OwnedFrame(cloning: frame!, time: frameTime ?? -1)
            }
            if draining { return nil }
            if try readPacket() {
                if awaitingKey {
                    guard packetIsKey else { continue }
                    awaitingKey = false
                }
                let sent = try sendVideo(packet)
                if sent < 0, sent != fs_averror_eagain() { continue }  // a damaged packet: skip it
            } else {
                avcodec_send_packet(codec, nil)
                draining = true
            }
        }
    }

    /// After a seek: the decoders forget what they had.
    func resetDecoders() {
        if let codec { avcodec_flush_buffers(codec) }
        draining = false
        audio.reset()
    }

    /// The next decoded audio of an input opened on its audio alone (several buffers, possibly none for a packet
    /// that gave nothing), or `nil` at the end.
    func nextAudioOnly() throws(MediaError) -> [AudioBuffer]? {
        guard audio.decoder != nil, !audio.drained else { return nil }
        while true {
            try checkCancelled()
            av_packet_unref(packet)
            let result = av_read_frame(format, packet)
            if result == fs_averror_eof() {
                audio.drain()
                return audio.take()
            }
            if result < 0 { throw readFailure(result) }
            _ = try PacketDecryption.decrypt(packet!, keys: contentKeys, url: url, required: true)
            guard audio.receive(packet!) else { continue }
            let buffers = audio.take()
            if !buffers.isEmpty { return buffers }
        }
    }

    /// Moves to the start of the input and resets the decoders: with a keyframe index, to its first entry (which a
    /// seek to 0 may pass over); without one, to the first byte (FFmpeg's byte seek). False when neither works.
    func rewind() throws(MediaError) -> Bool {
        try checkCancelled()
        if hasIndex {
            // The first entry of the index: a keyframe before the presentation's start (an edit list's pre-roll,
            // or a first GOP whose pictures come before time 0) that a seek to 0 passes over.
            guard let first = avformat_index_get_entry(stream, 0),
                av_seek_frame(format, streamIndex, first.pointee.timestamp, AVSEEK_FLAG_BACKWARD) >= 0
            else { return false }
        } else {
            guard av_seek_frame(format, -1, 0, AVSEEK_FLAG_BYTE) >= 0 else { return false }
        }
        resetDecoders()
        return true
    }
}
