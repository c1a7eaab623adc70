import FilmstripFormats
import FilmstripStreaming
import FilmstripSync
import Foundation

/// Puts CMCD data (SPEC 4.6) on every request a ``StreamSession`` makes, through the streaming client's request
/// decorator: the object (`ot`, `d`, `br`, `tb`) from the request itself, the rest from the session's status, which
/// the session updates as it goes. Nothing is sent when CMCD is not configured.
final class CmcdReporter: Sendable {
    /// What the requests report about the player.
    struct Status: Sendable {
        var streamingFormat: CmcdData.StreamingFormat?
        /// `nil` until the stream type is known (before that, `st` is not sent).
        var isLive: Bool?
        var playhead = 0.0
        var bufferEnd = 0.0
        var rate = 1.0
        var startup = true
        var starvation = false
        /// Measured throughput, bits per second.
        var throughput: Double?
        /// The highest bandwidth of the current track's renditions, bits per second.
        var topBitrate: Int?
        /// The segment fetched after the one being fetched (for `nor`).
        var next: (after: SegmentReference, next: SegmentReference)?
    }

    let configuration: CmcdConfiguration?
    private let status = Mutex(Status())

    init(configuration: CmcdConfiguration?) {
        self.configuration = configuration
    }

    /// Changes the status the next requests report.
    func update(_ change: (inout Status) -> Void) { status.withLock { change(&$0) } }

    /// The decorator to hand to the streaming client.
    var decorator: StreamingRequestDecorator? {
        guard configuration != nil else { return nil }
        return { [self] request in decorate(&request) }
    }

    func decorate(_ request: inout StreamingRequest) {
        guard let configuration else { return }
        let status = status.withLock { $0 }
        let data = data(for: request, status)
        switch configuration.mode {
        case .headers:
            for (name, value) in CmcdEncoder.headers(data, keys: configuration.keys, baseURL: request.url) {
                request.headers[name] = value
            }
        case .query:
            request.url = CmcdEncoder.url(request.url, adding: data, keys: configuration.keys, baseURL: request.url)
        }
    }

    private func data(for request: StreamingRequest, _ status: Status) -> CmcdData {
        var data = CmcdData(
            sessionID: configuration?.sessionID, contentID: configuration?.contentID,
            streamingFormat: status.streamingFormat,
            streamType: status.isLive.map { $0 ? .live : .vod })
        data.objectType = Self.objectType(of: request)
        data.startup = status.startup
        data.bufferStarvation = status.starvation
        // CMCD defines `pr` for forward rates only (0 when not playing): reverse playback sends none.
        data.playbackRate = status.rate == 1 || status.rate < 0 ? nil : status.rate
        data.measuredThroughput = status.throughput.map { $0 / 1000 }
        switch request.object {
        case .manifest, .mediaPlaylist, .clock:
            break
        case .segmentIndex, .initialization, .media, .key:
            let buffer = max(0, status.bufferEnd - status.playhead)
            data.bufferLength = buffer * 1000
            if status.rate > 0 { data.deadline = buffer / status.rate * 1000 }
            data.topBitrate = status.topBitrate.flatMap { $0 > 0 ? Double($0) / 1000 : nil }
            if let bandwidth = request.rendition?.bandwidth, bandwidth > 0 {
                data.encodedBitrate = Double(bandwidth) / 1000
            }
        }
        if request.object == .media, let segment = request.segment {
            data.objectDuration = segment.duration * 1000
            if let next = status.next, next.after == segment {
                data.nextObjectRequest = next.next.url.absoluteString
                if let range = next.next.byteRange {
                    data.nextRangeRequest = "\(range.lowerBound)-\(range.upperBound - 1)"
                }
            }
        }
        return data
    }

    /// `ot`: manifests and playlists `m`, init sections and a DASH segment index (initialisation information) `i`,
    /// keys `k`, media by the rendition's codecs (`av`, `a`, else `v`), a clock source `o`.
    static func objectType(of request: StreamingRequest) -> CmcdData.ObjectType {
        switch request.object {
        case .manifest, .mediaPlaylist: .manifest
        case .initialization, .segmentIndex: .initSegment
        case .key: .key
        case .clock: .other
        case .media: mediaType(codecs: request.rendition?.codecs, mimeType: request.rendition?.mimeType)
        }
    }

    /// The CMCD object type of media from its codecs (or, without them, its MIME type): audio and video, audio
    /// only, else video.
    static func mediaType(codecs: String?, mimeType: String?) -> CmcdData.ObjectType {
        guard let codecs = codecs?.lowercased() else {
            return mimeType?.lowercased().hasPrefix("audio/") == true ? .audio : .video
        }
        let list = codecs.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }
        let audio = list.contains {
            ["mp4a", "ac-3", "ec-3", "ac-4", "mp3", "opus", "flac", "alac", "vorbis", "dts"].contains(
                where: $0.hasPrefix)
        }
        let video = list.contains { ["avc", "hvc", "hev", "av01", "vp0", "vp9", "dvh"].contains(where: $0.hasPrefix) }
        if audio, video { return .muxed }
        if audio { return .audio }
        return .video
    }
}
