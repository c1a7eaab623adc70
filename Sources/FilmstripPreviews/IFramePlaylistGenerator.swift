import FilmstripFormats
public import FilmstripLoading
import FilmstripMedia
import FilmstripStreaming
import FilmstripSync
public import Foundation

/// What ``IFramePlaylistGenerator/generate(from:to:options:)`` wrote.
public struct IFramePlaylistSummary: Sendable {
    /// One I-frame playlist.
    public struct Playlist: Sendable {
        /// The file written.
        public var url: URL
        /// The media playlist it indexes.
        public var source: URL
        /// Keyframes listed.
        public var entries: Int
        /// `BANDWIDTH`: the largest keyframe's bits over its time.
        public var bandwidth: Int
        /// `AVERAGE-BANDWIDTH`: all keyframes' bits over the whole duration.
        public var averageBandwidth: Int
    }

    /// The I-frame playlists, one per video rendition.
    public var playlists: [Playlist]
    /// The master written beside them (for a master source).
    public var master: URL?
    /// Every file written.
    public var files: [URL] { playlists.map(\.url) + (master.map { [$0] } ?? []) }
}

/// Settings of ``IFramePlaylistGenerator``.
public struct IFramePlaylistConfiguration: Sendable {
    /// Timeouts, size limit, retries and headers for http(s) sources.
    public var loading = LoadingConfiguration(maximumResponseSize: 256 << 20, requestTimeout: 15, resourceTimeout: 120)
    /// The HTTP transport; `nil` uses ``DefaultTransport/shared``.
    public var transport: (any DataLoading)?

    /// The defaults.
    public init() {}
}

/// Writes HLS I-frame playlists (`EXT-X-I-FRAMES-ONLY`) for an HLS master or media playlist: every entry is the byte
/// range of one keyframe inside its original segment, with an `EXT-X-MAP` for what a demuxer needs first (the PAT and
/// PMT packets before it for MPEG-TS, the segment's initialisation section for fMP4), so each range with its map
/// decodes on its own. For a master, `master.m3u8` repeats it (its URIs pointing at the original playlists) and adds
/// one `EXT-X-I-FRAME-STREAM-INF` per video rendition (`BANDWIDTH` the peak of range bits over `EXTINF`,
/// `AVERAGE-BANDWIDTH` all bits over the duration, the rendition's video `CODECS` and `RESOLUTION`).
///
/// ```swift
/// let summary = try await IFramePlaylistGenerator.generate(from: masterURL, to: outputDirectory)
/// ```
public enum IFramePlaylistGenerator {
    /// Writes the playlists into `directory`.
    public static func generate(
        from source: URL, to directory: URL, options: IFramePlaylistConfiguration = IFramePlaylistConfiguration()
    ) async throws -> IFramePlaylistSummary {
        let client = StreamingClient(url: source, transport: options.transport, configuration: options.loading)
        let presentation: Presentation
        do { presentation = try await client.presentation() } catch {
            throw StreamFrames.mediaError(error, url: source)
        }
        guard presentation.streamingProtocol == .hls else {
            throw MediaError(
                .invalidArgument, "I-frame playlists are HLS: the source must be an HLS playlist", url: source)
        }
        do {
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        } catch {
            throw MediaError(
                .outputFailed, "cannot create \(directory.path): \(error.localizedDescription)", underlying: error)
        }
        guard let video = presentation.periods.first?.tracks.first(where: { $0.kind == .video }) else {
            throw MediaError(.noVideoStream, "the playlist has no video", url: source)
        }
        var playlists: [IFramePlaylistSummary.Playlist] = []
        var codecs: [String?] = []
        var names = Set<String>()
        for (index, rendition) in video.renditions.enumerated() {
            let mediaURL: URL
            if case .mediaPlaylist(let url) = rendition.segments { mediaURL = url } else { mediaURL = source }
            var name = mediaURL.deletingPathExtension().lastPathComponent + "-iframes.m3u8"
            if !names.insert(name).inserted {
                name = "v\(index)-" + name
                names.insert(name)
            }
            let (entries, codec) = try await Self.entries(
                for: rendition, in: presentation, client: client, source: source)
            codecs.append(codec)
            let file = directory.appendingPathComponent(name)
            let text = Self.playlist(entries, directory: directory)
            do { try Data(text.utf8).write(to: file, options: .atomic) } catch {
                throw MediaError(
                    .outputFailed, "cannot write \(file.path): \(error.localizedDescription)", underlying: error)
            }
            let bits = entries.map { Double($0.range.count * 8) }
            let peak = zip(bits, entries).map { $0 / max(0.001, $1.duration) }.max() ?? 0
            let total = entries.reduce(0) { $0 + $1.duration }
            playlists.append(
                .init(
                    url: file, source: mediaURL, entries: entries.count, bandwidth: Int(peak.rounded(.up)),
                    averageBandwidth: Int((bits.reduce(0, +) / max(0.001, total)).rounded(.up))))
        }
        var master: URL?
        if case .mediaPlaylist = video.renditions.first?.segments {
            master = try await Self.writeMaster(
                source: source, directory: directory, client: client, renditions: video.renditions,
                playlists: playlists, codecs: codecs)
        }
        return IFramePlaylistSummary(playlists: playlists, master: master)
    }

    /// One keyframe: where it is, its map, its time.
    struct Entry {
        var uri: URL
        var range: Range<Int64>
        var map: InitializationSection
        var time: Double
        var duration: Double
    }

    /// The rendition's keyframes, and its video's `CODECS` value as its first segment's decoder configuration
    /// spells it.
    static func entries(
        for rendition: Presentation.Rendition, in presentation: Presentation, client: StreamingClient, source: URL
    ) async throws -> (entries: [Entry], codec: String?) {
        let segments: [SegmentReference]
        do { segments = try await client.segments(of: rendition, in: presentation) } catch {
            throw StreamFrames.mediaError(error, url: source)
        }
        var keyframes: [(uri: URL, range: Range<Int64>, map: InitializationSection, time: Double, end: Double)] = []
        // MPEG-TS: the program tables last seen, and where they are, for a segment that carries none before its
        // video (RFC 8216 only says SHOULD).
        var tables: ProgramTables?
        var codec: String?
        for segment in segments {
            guard segment.key == nil else {
                throw MediaError(
                    .invalidArgument, "encrypted segments cannot be indexed by I-frame byte ranges", url: segment.url)
            }
            let initialization: Data
            let media: Data
            do {
                initialization = try await client.initialization(for: segment)
                media = try await client.media(segment)
            } catch {
                throw StreamFrames.mediaError(error, url: segment.url)
            }
            let seen = tables
            let found = try await runBlocking {
                try Self.keyframes(in: segment, initialization: initialization, media: media, tables: seen)
            }
            keyframes += found.keyframes
            tables = found.tables ?? tables
            codec = codec ?? found.codec
        }
        // Each keyframe lasts until the next one.
        let entries = keyframes.enumerated().map { k, key in
            let next = k + 1 < keyframes.count ? keyframes[k + 1].time : key.end
            return Entry(
                uri: key.uri, range: key.range, map: key.map, time: key.time, duration: max(0.001, next - key.time))
        }
        return (entries, codec)
    }

    /// An MPEG-TS segment's PAT and PMT: their bytes, and the map that names them in their resource.
    struct ProgramTables {
        var bytes: Data
        var map: InitializationSection
    }

    /// The keyframes of one segment, with byte ranges in the segment's resource, and (MPEG-TS) the program tables
    /// the segment carries before its video. A TS segment that carries none uses `tables`, the last ones seen.
    static func keyframes(
        in segment: SegmentReference, initialization: Data, media: Data, tables: ProgramTables? = nil
    ) throws -> (
        keyframes: [(uri: URL, range: Range<Int64>, map: InitializationSection, time: Double, end: Double)],
        tables: ProgramTables?, codec: String?
    ) {
        let isTS = segment.initialization == nil && TransportStreamTables.isTransportStream(media)
        let borrowed = isTS && !TransportStreamTables.beginsWithTables(media) ? tables : nil
        if isTS, !TransportStreamTables.beginsWithTables(media), borrowed == nil {
            throw MediaError(
                .invalidMedia, "the segment has no PAT/PMT before its video, and no earlier segment had one",
                url: segment.url)
        }
        let head = initialization + (borrowed?.bytes ?? Data())
        let opened = try StreamSegment(reference: segment, bytes: head + media, cancellation: CancellationFlag())
        let base = segment.byteRange?.lowerBound ?? 0
        let offset = Int64(head.count)
        // Positions in the media bytes, in decode order.
        let positions = opened.packets.map { $0.position - offset }
        guard positions.allSatisfy({ $0 >= 0 }) else {
            throw MediaError(.invalidMedia, "the demuxer gave no byte positions for the segment", url: segment.url)
        }
        let boxes = segment.initialization != nil ? Self.topLevelBoxes(media) : []
        var out: [(uri: URL, range: Range<Int64>, map: InitializationSection, time: Double, end: Double)] = []
        for (k, packet) in opened.packets.enumerated() where packet.isKey {
            let start: Int64
            let end: Int64
            let map: InitializationSection
            if let section = segment.initialization {
                // fMP4: from the moof that describes the keyframe's mdat to the end of the keyframe's sample.
                guard let moof = boxes.last(where: { $0.type == "moof" && $0.start <= positions[k] }) else {
                    throw MediaError(.invalidMedia, "no moof before the keyframe at \(positions[k])", url: segment.url)
                }
                // Only a keyframe that is its fragment's first sample decodes from such a range: one later in the
                // fragment (a fragment of several GOPs, as Shaka Packager writes them) would come out as the
                // fragment's first picture. The previous entry then lasts until the next one listed.
                if k > 0, positions[k - 1] >= moof.start { continue }
                start = moof.start
                end = positions[k] + Int64(packet.size)
                map = section
            } else {
                // MPEG-TS: from the keyframe's first TS packet to the next video packet; the map is what precedes the
                // first video packet (PAT, PMT).
                start = positions[k]
                end = Self.wholeKeyframeEnd(
                    of: packet, at: start, after: positions.dropFirst(k + 1).filter { $0 > start }, media: media,
                    tables: borrowed?.bytes ?? Data(media.prefix(Int(max(0, positions.min() ?? 0)))),
                    segment: segment)
                if let borrowed {
                    map = borrowed.map
                } else {
                    let first = positions.min() ?? 0
                    guard first > 0 else {
                        throw MediaError(.invalidMedia, "the segment has no PAT/PMT before its video", url: segment.url)
                    }
                    map = InitializationSection(url: segment.url, byteRange: base..<(base + first))
                }
            }
            guard start >= 0, end <= Int64(media.count), end > start else {
                throw MediaError(.invalidMedia, "a keyframe's bytes fall outside its segment", url: segment.url)
            }
            out.append((segment.url, (base + start)..<(base + end), map, opened.time(of: packet), segment.end))
        }
        var own: ProgramTables?
        if isTS, borrowed == nil, let first = positions.min(), first > 0, first <= Int64(media.count) {
            own = ProgramTables(
                bytes: Data(media.prefix(Int(first))),
                map: InitializationSection(url: segment.url, byteRange: base..<(base + first)))
        }
        return (out, own, opened.input.codecString)
    }

    /// Where a TS keyframe's range ends: the next video packet's start, or a later one when the frame's data goes on
    /// past it (a PES that carries one frame's end and the next one's start, as some segmenters write). Each
    /// candidate is demuxed after the tables: the first one whose keyframe comes out whole is the end.
    static func wholeKeyframeEnd(
        of packet: OwnedPacket, at start: Int64, after candidates: [Int64], media: Data, tables: Data,
        segment: SegmentReference
    ) -> Int64 {
        for end in candidates.sorted().prefix(8) where end <= Int64(media.count) {
            let bytes = tables + media[(media.startIndex + Int(start))..<(media.startIndex + Int(end))]
            let opened = try? StreamSegment(reference: segment, bytes: bytes, cancellation: CancellationFlag())
            if let key = opened?.firstKeyPacket, key.size >= packet.size { return end }
        }
        return Int64(media.count)
    }

    /// The top-level ISO BMFF boxes of `data`: type and byte range.
    static func topLevelBoxes(_ data: Data) -> [(type: String, start: Int64, end: Int64)] {
        var boxes: [(String, Int64, Int64)] = []
        data.withUnsafeBytes { raw in
            var offset = 0
            while offset + 8 <= raw.count {
                var size = 0
                for k in 0..<4 { size = size << 8 | Int(raw[offset + k]) }
                let type = String(decoding: raw[(offset + 4)..<(offset + 8)], as: UTF8.self)
                if size == 1, offset + 16 <= raw.count {
                    size = 0
                    for k in 8..<16 { size = size << 8 | Int(raw[offset + k]) }
                } else if size == 0 {
                    size = raw.count - offset
                }
                guard size >= 8, offset + size <= raw.count else { break }
                boxes.append((type, Int64(offset), Int64(offset + size)))
                offset += size
            }
        }
        return boxes
    }

    /// The I-frame playlist text.
    static func playlist(_ entries: [Entry], directory: URL) -> String {
        let target = Int((entries.map(\.duration).max() ?? 1).rounded(.up))
        var text = "#EXTM3U\n#EXT-X-VERSION:5\n#EXT-X-TARGETDURATION:\(max(1, target))\n#EXT-X-MEDIA-SEQUENCE:0\n"
        text += "#EXT-X-PLAYLIST-TYPE:VOD\n#EXT-X-I-FRAMES-ONLY\n"
        var map: InitializationSection?
        for entry in entries {
            if entry.map != map {
                map = entry.map
                text += "#EXT-X-MAP:URI=\"\(reference(entry.map.url, from: directory))\""
                if let range = entry.map.byteRange { text += ",BYTERANGE=\"\(range.count)@\(range.lowerBound)\"" }
                text += "\n"
            }
            text += String(format: "#EXTINF:%.6f,\n", entry.duration)
            text += "#EXT-X-BYTERANGE:\(entry.range.count)@\(entry.range.lowerBound)\n"
            text += reference(entry.uri, from: directory) + "\n"
        }
        return text + "#EXT-X-ENDLIST\n"
    }

    /// How a file in `directory` refers to `url`: a relative path for a local file, else the absolute URL.
    static func reference(_ url: URL, from directory: URL) -> String {
        guard url.isFileURL, directory.isFileURL else { return url.absoluteString }
        let target = url.standardizedFileURL.pathComponents
        let base = directory.standardizedFileURL.pathComponents
        var common = 0
        while common < min(target.count - 1, base.count), target[common] == base[common] { common += 1 }
        let ups = Array(repeating: "..", count: base.count - common)
        return (ups + target[common...]).joined(separator: "/")
    }

    /// `master.m3u8`: the source master with its URIs pointing at the originals, plus the I-frame streams.
    static func writeMaster(
        source: URL, directory: URL, client: StreamingClient, renditions: [Presentation.Rendition],
        playlists: [IFramePlaylistSummary.Playlist], codecs: [String?]
    ) async throws -> URL {
        let loader = ResourceLoader(configuration: LoadingConfiguration(), transport: nil)
        let original: Data
        do { original = try await loader.data(for: source) } catch {
            throw MediaError(.inputUnavailable, "cannot read the stream", url: source, underlying: error)
        }
        var lines: [String] = []
        for line in String(decoding: original, as: UTF8.self).split(
            omittingEmptySubsequences: false, whereSeparator: \.isNewline)
        {
            var text = String(line)
            if !text.hasPrefix("#"), !text.trimmingCharacters(in: .whitespaces).isEmpty,
                let url = URL(string: text.trimmingCharacters(in: .whitespaces), relativeTo: source)?.absoluteURL
            {
                text = reference(url, from: directory)
            } else if let range = text.range(of: "URI=\""), let close = text[range.upperBound...].firstIndex(of: "\""),
                let url = URL(string: String(text[range.upperBound..<close]), relativeTo: source)?.absoluteURL
            {
                text.replaceSubrange(range.upperBound..<close, with: reference(url, from: directory))
            }
            lines.append(text)
        }
        while lines.last?.isEmpty == true { lines.removeLast() }
        for ((rendition, playlist), codec) in zip(zip(renditions, playlists), codecs) {
            var tag =
                "#EXT-X-I-FRAME-STREAM-INF:BANDWIDTH=\(playlist.bandwidth),AVERAGE-BANDWIDTH=\(playlist.averageBandwidth)"
            let video = (rendition.codecs ?? "").split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }
                .filter { ["avc1", "avc3", "hvc1", "hev1", "av01", "vp09"].contains(String($0.prefix(4))) }
            // The master's video codec, else the one the stream's own configuration gives.
            if !video.isEmpty {
                tag += ",CODECS=\"\(video.joined(separator: ","))\""
            } else if let codec {
                tag += ",CODECS=\"\(codec)\""
            }
            if let w = rendition.width, let h = rendition.height { tag += ",RESOLUTION=\(w)x\(h)" }
            tag += ",URI=\"\(playlist.url.lastPathComponent)\""
            lines.append(tag)
        }
        let file = directory.appendingPathComponent("master.m3u8")
        do { try Data((lines.joined(separator: "\n") + "\n").utf8).write(to: file, options: .atomic) } catch {
            throw MediaError(
                .outputFailed, "cannot write \(file.path): \(error.localizedDescription)", underlying: error)
        }
        return file
    }
}
