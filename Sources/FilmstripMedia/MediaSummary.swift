import CFFmpeg
public import Foundation

/// What a media file holds, as `filmstrip inspect` reports it: its container, duration and streams, and whether it
/// has video or only audio.
///
/// ```swift
/// let summary = try MediaSummary.probe(url: songURL)
/// print(summary.isAudioOnly, summary.audio.first?.codec ?? "none")   // true mp3
/// ```
public struct MediaSummary: Sendable, Hashable {
    /// A video stream.
    public struct Video: Sendable, Hashable {
        /// FFmpeg's name of the codec (`h264`, `hevc`, `h263`...).
        public var codec: String
        /// The coded size.
        public var width: Int
        public var height: Int
        /// The size shown (sample aspect ratio and display matrix applied).
        public var displayWidth: Int
        public var displayHeight: Int
        /// Frames a second, when the container or the stream says (0 when unknown).
        public var frameRate: Double
        /// Clockwise quarter turns the display matrix asks for (0...3), and whether it mirrors the picture.
        public var quarterTurns: Int
        public var mirrored: Bool
    }

    /// An audio stream.
    public struct Audio: Sendable, Hashable {
        /// FFmpeg's name of the codec (`aac`, `mp3`, `opus`...), or the container's code for one FFmpeg does not know.
        public var codec: String
        public var channels: Int
        public var sampleRate: Int
        /// The stream's language tag, when the container gives one.
        public var language: String?
        /// Whether the linked FFmpeg can decode it.
        public var isDecodable: Bool
    }

    /// FFmpeg's name of the container (`mov,mp4,m4a,3gp,3g2,mj2`, `mpegts`, `ogg`...).
    public var container: String
    /// Seconds (0 when unknown).
    public var duration: Double
    /// The video that plays (not a cover picture), if any.
    public var video: Video?
    /// Every audio stream, in the file's order.
    public var audio: [Audio]
    /// Whether the file carries a cover picture (an attached picture, as music files do).
    public var hasCoverPicture: Bool

    /// Whether the file has audio and no video.
    public var isAudioOnly: Bool { video == nil && !audio.isEmpty }

    /// Opens `url` (a file or an http(s) URL, with bounded Range requests) and reads what it holds. Throws as the
    /// decoders do: `unsupportedCodec` naming the codec when its video cannot be decoded, `noVideoStream` when it has
    /// neither video nor audio.
    public static func probe(
        url: URL, options: FrameExtractorConfiguration = FrameExtractorConfiguration()
    ) throws -> MediaSummary {
        let input = try MediaInput(
            .url(url, network: options.network), cancellation: CancellationFlag(), audio: .standard, audioOnly: true)
        return MediaSummary(of: input)
    }
}

extension MediaSummary {
    /// The summary of an opened input.
    init(of input: MediaInput) {
        guard let format = input.format else {
            self.init(container: "", duration: 0, audio: [], hasCoverPicture: false)
            return
        }
        let (stream, displaySize, quarterTurns) = (input.stream, input.displaySize, input.quarterTurns)
        let streams = (0..<Int(format.pointee.nb_streams)).map { format.pointee.streams[$0]! }
        var video: MediaSummary.Video?
        if !input.isAudioOnly {
            let parameters = stream.pointee.codecpar.pointee
            // The average rate; the real base rate only when it is a plausible picture rate (Matroska's is its
            // timestamps' 1 kHz).
            let average = stream.pointee.avg_frame_rate
            let base = stream.pointee.r_frame_rate
            let baseRate = base.den > 0 ? Double(base.num) / Double(base.den) : 0
            let rate = average.num > 0 || baseRate > 240 ? average : base
            video = MediaSummary.Video(
                codec: ContainerFacts.codecName(parameters.codec_id, tag: parameters.codec_tag),
                width: Int(parameters.width),
                height: Int(parameters.height), displayWidth: displaySize.width, displayHeight: displaySize.height,
                frameRate: rate.den > 0 ? Double(rate.num) / Double(rate.den) : 0, quarterTurns: quarterTurns & 3,
                mirrored: quarterTurns & 4 != 0)
        }
        let audio = streams.filter { $0.pointee.codecpar.pointee.codec_type == AVMEDIA_TYPE_AUDIO }.map { stream in
            let parameters = stream.pointee.codecpar.pointee
            let language = av_dict_get(stream.pointee.metadata, "language", nil, 0).map {
                String(cString: $0.pointee.value)
            }
            return MediaSummary.Audio(
                codec: ContainerFacts.codecName(parameters.codec_id, tag: parameters.codec_tag),
                channels: Int(parameters.ch_layout.nb_channels), sampleRate: Int(parameters.sample_rate),
                language: language == "und" ? nil : language,
                isDecodable: avcodec_find_decoder(parameters.codec_id) != nil)
        }
        let container = format.pointee.iformat.map { String(cString: $0.pointee.name) } ?? ""
        self.init(
            container: container, duration: input.duration, video: video, audio: audio,
            hasCoverPicture: streams.contains(where: ContainerFacts.isCoverPicture))
    }
}
