import CFFmpeg

/// The FFmpeg that Filmstrip links: its version and what it can read (Filmstrip's own static build leaves out every
/// codec and container not on its list; `Scripts/build-ffmpeg.sh`).
public enum MediaLibraries {
    /// FFmpeg's version string (`5.1.9`, or the distribution's full version of a shared build).
    public static var ffmpegVersion: String { String(cString: av_version_info()) }

    /// Whether a decoder of this FFmpeg name (`h263`, `vc1`, `dca`, `libdav1d`) is linked.
    public static func hasDecoder(named name: String) -> Bool { avcodec_find_decoder_by_name(name) != nil }

    /// Whether a demuxer of this FFmpeg name (`mov`, `asf`, `mxf`; one name of a list such as `mov,mp4,m4a`) is
    /// linked.
    public static func hasDemuxer(named name: String) -> Bool { av_find_input_format(name) != nil }

    /// Whether a parser for the decoder of this name is linked (parsers split raw and MPEG-TS/PS streams into
    /// frames).
    public static func hasParser(forDecoder name: String) -> Bool {
        guard let codec = avcodec_find_decoder_by_name(name) else { return false }
        guard let parser = av_parser_init(Int32(codec.pointee.id.rawValue)) else { return false }
        av_parser_close(parser)
        return true
    }
}
