public import FilmstripFormats
import FilmstripLoading
public import Foundation

/// A manifest as the streaming layer reads it, from a server or a file: its type told from its content, its size and
/// entries within ``StreamingLimits``, parsed by the HLS or DASH parser. The player's client, the `.frames` engine
/// and a folder scan (``referencedFiles(includingRanged:)``) all read manifests through it.
public enum ParsedManifest: Sendable {
    /// An HLS playlist, master or media.
    case hls(HLSPlaylist)
    /// A DASH MPD.
    case dash(Presentation)

    /// Parses `data`, telling HLS from DASH by its content.
    ///
    /// - Throws: ``StreamingError`` of kind `.manifest` (neither, or malformed), `.unsupported` or `.tooLarge` (past
    ///   `limits`), naming the line or element.
    public init(_ data: Data, url: URL, limits: StreamingLimits = StreamingLimits()) throws(StreamingError) {
        func kind(_ unsupported: Bool, _ tooLarge: Bool) -> StreamingError.Kind {
            unsupported ? .unsupported : tooLarge ? .tooLarge : .manifest
        }
        switch ContentKind.detect(data) {
        case .hlsPlaylist?:
            do {
                self = .hls(try HLSPlaylistParser(maximumEntries: limits.maximumEntries).parse(data, url: url))
            } catch {
                throw StreamingError(
                    kind(error.kind == .unsupported, error.kind == .tooLarge),
                    "the playlist cannot be used: line \(error)",
                    url: url, underlying: error)
            }
        case .mpd?:
            do {
                self = .dash(
                    try DASHManifestParser(
                        limits: .init(maximumBytes: limits.maximumManifestBytes, maximumEntries: limits.maximumEntries)
                    ).parse(data, url: url))
            } catch {
                throw StreamingError(
                    kind(error.kind == .unsupported, error.kind == .tooLarge), "the MPD cannot be used: \(error)",
                    url: url, underlying: error)
            }
        default:
            throw StreamingError(.manifest, "neither an HLS playlist (#EXTM3U) nor a DASH MPD", url: url)
        }
    }

    /// Reads and parses a local manifest: a regular file of at most `limits.maximumManifestBytes`.
    public init(contentsOf file: URL, limits: StreamingLimits = StreamingLimits()) throws(StreamingError) {
        if let problem = LocalFile.problem(file) { throw StreamingError(.manifest, problem, url: file) }
        guard let size = LocalFile.regularFileSize(file), size <= Int64(limits.maximumManifestBytes) else {
            throw StreamingError(.tooLarge, "the manifest is over \(limits.maximumManifestBytes) bytes", url: file)
        }
        let data: Data
        do {
            data = try Data(contentsOf: file)
        } catch {
            throw StreamingError(.manifest, "the manifest cannot be read", url: file, underlying: error)
        }
        try self.init(data, url: file, limits: limits)
    }

    /// The presentation it describes (an HLS master's media playlists are named, not loaded).
    public func presentation(url: URL) -> Presentation {
        switch self {
        case .hls(let playlist): playlist.presentation(url: url)
        case .dash(let presentation): presentation
        }
    }

    /// Whether it is one a person watches: not an image or I-frame playlist, or an MPD of images alone (a preview
    /// track on its own, as `generate` writes beside a stream).
    public var playsMedia: Bool {
        switch self {
        case .hls(.media(let media)): !media.imagesOnly && !media.iFramesOnly
        case .hls(.master): true
        case .dash(let presentation):
            presentation.periods.contains { $0.tracks.contains { $0.kind == .video || $0.kind == .audio } }
        }
    }

    /// The local files it names, as standardized paths: an HLS playlist's segments, `EXT-X-MAP` sections and the
    /// variant, rendition, I-frame and image playlists of a master; an MPD's listed segments, `SegmentBase` resources
    /// and initialisation sections (a template's segments are not named one by one). A file addressed by byte ranges
    /// holds a whole stream; it is left out unless `includingRanged`.
    public func referencedFiles(includingRanged: Bool) -> Set<String> {
        var paths: Set<String> = []
        func add(_ url: URL?, ranged: Bool = false) {
            guard let url, url.isFileURL, includingRanged || !ranged else { return }
            paths.insert(url.standardizedFileURL.path)
        }
        switch self {
        case .hls(.master(let master)):
            for variant in master.variants { add(variant.uri) }
            for rendition in master.renditions { add(rendition.uri) }
            for stream in master.iFrameStreams + master.imageStreams { add(stream.uri) }
        case .hls(.media(let media)):
            for segment in media.segments {
                add(segment.uri, ranged: segment.byteRange != nil)
                if let map = segment.map { add(map.uri, ranged: map.byteRange != nil) }
            }
        case .dash(let presentation):
            for rendition in presentation.periods.flatMap(\.tracks).flatMap(\.renditions) {
                switch rendition.segments {
                case .list(let references):
                    for reference in references {
                        add(reference.url, ranged: reference.byteRange != nil)
                        if let section = reference.initialization {
                            add(section.url, ranged: section.byteRange != nil)
                        }
                    }
                case .segmentBase(let index): add(index.url, ranged: true)
                case .template(let template): add(template.initializationSection?.url)
                case .mediaPlaylist(let url): add(url)
                }
            }
        }
        return paths
    }
}
