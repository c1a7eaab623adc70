import CFFmpeg
import Foundation

/// What an input's container says before anything is decoded: which stream is the video (not a cover picture),
/// the names of codecs for messages, the file's start, whether it has an exact keyframe index, and whether a
/// stream's declared size is within the limits.
enum ContainerFacts {
    /// The largest side of a video, in pixels (16K).
    static let maximumSide = 16_384
    /// The most pixels in a frame (64 Mpx; 8K UHD is 33 Mpx). The decoder is held to it too.
    static let maximumPixels = 8_192 * 8_192
    /// The most elongated picture, as the longer side over the shorter one once displayed.
    static let maximumAspect = 16.0

    /// The video stream to decode: the best one that is not a cover picture (an attached picture is the art of an
    /// audio file, not its video).
    static func videoStream(
        _ context: UnsafeMutablePointer<AVFormatContext>, decoder: inout UnsafePointer<AVCodec>?
    ) -> Int32 {
        let best = av_find_best_stream(context, AVMEDIA_TYPE_VIDEO, -1, -1, &decoder, 0)
        guard best >= 0, isCoverPicture(context.pointee.streams[Int(best)]!) else { return best }
        for i in 0..<Int(context.pointee.nb_streams) {
            let stream = context.pointee.streams[i]!
            guard stream.pointee.codecpar.pointee.codec_type == AVMEDIA_TYPE_VIDEO, !isCoverPicture(stream) else {
                continue
            }
            return av_find_best_stream(context, AVMEDIA_TYPE_VIDEO, Int32(i), -1, &decoder, 0)
        }
        decoder = nil
        return fs_averror_stream_not_found()
    }

    /// The codec of the best video stream, decodable or not (for messages).
    static func videoCodecName(_ context: UnsafeMutablePointer<AVFormatContext>) -> String {
        let index = av_find_best_stream(context, AVMEDIA_TYPE_VIDEO, -1, -1, nil, 0)
        guard index >= 0, let stream = context.pointee.streams[Int(index)] else { return "unknown" }
        return codecName(stream.pointee.codecpar.pointee.codec_id, tag: stream.pointee.codecpar.pointee.codec_tag)
    }

    /// FFmpeg's name of a codec, or (a codec FFmpeg does not know, such as VVC in FFmpeg 5) the four-character code
    /// the container gives it.
    static func codecName(_ id: AVCodecID, tag: UInt32) -> String {
        if id != AV_CODEC_ID_NONE, let name = avcodec_get_name(id) { return String(cString: name) }
        let bytes = (0..<4).map { UInt8(truncatingIfNeeded: tag >> (8 * $0)) }
        guard tag != 0, bytes.allSatisfy({ (0x20...0x7e).contains($0) }) else { return "unknown" }
        return "'" + String(decoding: bytes, as: UTF8.self) + "' (a codec FFmpeg does not know)"
    }

    static func isCoverPicture(_ stream: UnsafeMutablePointer<AVStream>) -> Bool {
        stream.pointee.disposition & AV_DISPOSITION_ATTACHED_PIC != 0
    }

    /// "the input has no video stream", with what it has instead (audio only, with or without a cover picture).
    static func noVideoMessage(_ context: UnsafeMutablePointer<AVFormatContext>) -> String {
        let streams = (0..<Int(context.pointee.nb_streams)).map { context.pointee.streams[$0]! }
        let hasAudio = streams.contains { $0.pointee.codecpar.pointee.codec_type == AVMEDIA_TYPE_AUDIO }
        let hasCover = streams.contains(where: isCoverPicture)
        guard hasAudio else { return "the input has no video stream" }
        return "the input has no video stream: it is audio only" + (hasCover ? " (with a cover picture)" : "")
    }

    /// Whether a video stream's header leaves its size out (0x0: H.263 in 3GP, some MPEG-4 Part 2 files): the
    /// decoder then reads it from the first picture, which probing packets gives it.
    static func lacksVideoSize(_ context: UnsafeMutablePointer<AVFormatContext>) -> Bool {
        (0..<Int(context.pointee.nb_streams)).contains { i in
            let parameters = context.pointee.streams[i]!.pointee.codecpar.pointee
            return parameters.codec_type == AVMEDIA_TYPE_VIDEO && (parameters.width <= 0 || parameters.height <= 0)
        }
    }

    /// The file's start (the earliest first timestamp of its streams) in `timeBase` units, when known.
    static func fileStart(_ context: UnsafeMutablePointer<AVFormatContext>, in timeBase: AVRational) -> Int64? {
        let start = context.pointee.start_time
        guard start != fs_nopts_value(), timeBase.num > 0, timeBase.den > 0 else { return nil }
        return av_rescale_q(start, AVRational(num: 1, den: Int32(fs_time_base())), timeBase)
    }

    /// Where the index puts the keyframe at or before `timestamp` (stream time base) when it gives both its place and
    /// its size (MP4's sample tables; Matroska's cues give no size): the bytes a demuxer reads for it.
    static func keyframeBytes(_ stream: UnsafeMutablePointer<AVStream>, atOrBefore timestamp: Int64) -> Range<Int64>? {
        let entry = av_index_search_timestamp(stream, timestamp, AVSEEK_FLAG_BACKWARD)
        guard entry >= 0, let found = avformat_index_get_entry(stream, entry), found.pointee.size > 0,
            found.pointee.pos >= 0
        else { return nil }
        let (end, overflow) = found.pointee.pos.addingReportingOverflow(Int64(found.pointee.size))
        return overflow ? nil : found.pointee.pos..<end
    }

    /// Whether the container gives an exact keyframe index before any packet is read (MP4/MOV's sample tables,
    /// Matroska's cues, AVI's idx1). An MPEG-TS or MPEG-PS has entries too once probing has read some packets, but
    /// only those: a seek there lands by timestamps.
    static func hasKeyframeIndex(
        _ context: UnsafeMutablePointer<AVFormatContext>, _ stream: UnsafeMutablePointer<AVStream>
    ) -> Bool {
        guard avformat_index_get_entries_count(stream) > 0, let name = context.pointee.iformat?.pointee.name else {
            return false
        }
        let format = String(cString: name)
        return format.hasPrefix("mov,") || format.hasPrefix("matroska") || format == "avi"
    }

    /// MP4/MOV carry complete stream parameters and an index in their header: probing packets would only cost
    /// bytes (and, over HTTP, requests).
    static func isIndexedContainer(_ context: UnsafeMutablePointer<AVFormatContext>) -> Bool {
        guard let name = context.pointee.iformat?.pointee.name else { return false }
        return String(cString: name).hasPrefix("mov,")
    }

    /// What is wrong with a stream's declared size (coded and displayed), or `nil` when it is within the limits.
    static func sizeProblem(_ parameters: AVCodecParameters) -> String? {
        let (width, height) = (Int(parameters.width), Int(parameters.height))
        let size = "a size of \(width)x\(height)"
        guard width > 0, height > 0 else { return size }
        guard width <= maximumSide, height <= maximumSide, width * height <= maximumPixels else {
            return size + " (the limit is \(maximumSide) px a side and \(maximumPixels / 1_000_000) Mpx)"
        }
        var displayed = Double(width)
        let sar = parameters.sample_aspect_ratio
        if sar.num > 0, sar.den > 0 { displayed *= Double(sar.num) / Double(sar.den) }
        let aspect = max(displayed / Double(height), Double(height) / displayed)
        guard aspect <= maximumAspect else {
            return size + " shown \(Int(displayed.rounded()))x\(height), more than \(Int(maximumAspect)):1"
        }
        return nil
    }

    /// The bytes of the file's cover picture (an attached picture), when it has one of at most 16 MB.
    static func coverPicture(_ context: UnsafeMutablePointer<AVFormatContext>) -> Data? {
        for i in 0..<Int(context.pointee.nb_streams) {
            let stream = context.pointee.streams[i]!
            guard isCoverPicture(stream) else { continue }
            let packet = stream.pointee.attached_pic
            guard let data = packet.data, packet.size > 0, packet.size <= 16 << 20 else { continue }
            return Data(bytes: data, count: Int(packet.size))
        }
        return nil
    }
}
