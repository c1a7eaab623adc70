import CFFmpeg
import FilmstripFormats
import Foundation

extension MediaInput {
    /// The video's RFC 6381 `CODECS` value, from the decoder configuration the demuxer found (an MP4 sample entry's
    /// record, or the parameter sets of an MPEG-TS stream); `nil` for a codec other than H.264, HEVC and AV1, or
    /// when there is no configuration to read it from.
    package var codecString: String? {
        let parameters = stream.pointee.codecpar.pointee
        let codec: VideoCodecString.Codec
        switch parameters.codec_id {
        case AV_CODEC_ID_H264: codec = .h264
        case AV_CODEC_ID_HEVC: codec = .hevc
        case AV_CODEC_ID_AV1: codec = .av1
        default: return nil
        }
        guard let extradata = parameters.extradata, parameters.extradata_size > 0 else { return nil }
        let configuration = Data(bytes: extradata, count: Int(parameters.extradata_size))
        let tag = parameters.codec_tag
        let fourcc = String(
            decoding: [0, 8, 16, 24].map { UInt8(truncatingIfNeeded: tag >> $0) }, as: UTF8.self)
        return VideoCodecString.make(codec, sampleEntry: fourcc, configuration: configuration)
    }
}
