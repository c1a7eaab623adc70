public import Foundation

/// Parses WebVTT thumbnail tracks: cues whose payload is an image reference, optionally with a spatial fragment.
///
/// The parser works on the raw bytes of the file (no `String` per line) and follows the W3C WebVTT block rules:
/// an optional UTF-8 BOM, a `WEBVTT` header, CRLF/LF/CR line endings, `NOTE` blocks anywhere, `STYLE` and `REGION`
/// blocks before the first cue, optional cue identifiers, and cue settings after the end time (ignored).
///
/// ```swift
/// let parser = WebVTTThumbnailParser(mode: .lenient)
/// let track = try parser.parse(data, trackURL: URL(string: "https://cdn.example/movie/thumbs.vtt")!)
/// for cue in track.cues { print(cue.start, track.imageURL(of: cue), cue.region as Any) }
/// ```
public struct WebVTTThumbnailParser: Sendable {
    /// How the parser treats malformed cues.
    public enum Mode: String, Sendable, Hashable, CaseIterable {
        /// The first malformed cue throws a ``WebVTTParseError`` with line, column and snippet.
        case strict
        /// Malformed cues are skipped and reported in ``ThumbnailTrack/diagnostics``.
        case lenient
    }

    /// How malformed cues are treated. The default is ``Mode/strict``.
    public var mode: Mode

    /// The most cues a track may hold; a longer track is refused with ``WebVTTDiagnostic/Kind/tooManyCues`` (in
    /// both modes) before more is stored. Default 1,000,000 (a cue a second for eleven days).
    public var maximumCues: Int

    /// Creates a parser.
    public init(mode: Mode = .strict, maximumCues: Int = 1_000_000) {
        self.mode = mode
        self.maximumCues = maximumCues
    }

    /// Parses a track from its bytes.
    ///
    /// - Parameters:
    ///   - bytes: the file's contents.
    ///   - trackURL: where the track came from; relative image references resolve against it, and a track whose
    ///     URL is not a `file:` URL may not refer to `file:` images.
    /// - Throws: ``WebVTTParseError``: always for a missing header, and in strict mode for the first malformed cue.
    public func parse(_ bytes: some ContiguousBytes, trackURL: URL) throws(WebVTTParseError) -> ThumbnailTrack {
        let result: Result<ThumbnailTrack, WebVTTParseError> = bytes.withUnsafeBytes { raw in
            var state = WebVTTParserState(bytes: raw, trackURL: trackURL, mode: mode, maximumCues: maximumCues)
            do throws(WebVTTParseError) {
                return .success(try state.run())
            } catch {
                return .failure(error)
            }
        }
        return try result.get()
    }

    /// Parses a track from text.
    public func parse(_ text: String, trackURL: URL) throws(WebVTTParseError) -> ThumbnailTrack {
        try parse(Array(text.utf8), trackURL: trackURL)
    }

    /// The cues of a WebVTT file as a browser's parser gives them (the W3C WebVTT parser algorithm): every cue whose
    /// timing line parses, whatever its payload, with its identifier as written (`""` when it has none) and NUL
    /// characters as U+FFFD. In strict mode the first timing line or block a browser would drop is an error; in
    /// lenient mode each is a diagnostic. ``parse(_:trackURL:)`` reads the same cues as thumbnails (each needs an
    /// image reference).
    public func cues(in bytes: some ContiguousBytes) throws(WebVTTParseError) -> [WebVTTCue] {
        let result: Result<[WebVTTCue], WebVTTParseError> = bytes.withUnsafeBytes { raw in
            var state = WebVTTParserState(
                bytes: raw, trackURL: URL(fileURLWithPath: "/"), mode: mode, maximumCues: maximumCues)
            state.collectsTextCues = true
            do throws(WebVTTParseError) {
                _ = try state.run()
                return .success(state.textCues)
            } catch {
                return .failure(error)
            }
        }
        return try result.get()
    }
}

/// A cue as a browser's text track holds it: what ``WebVTTThumbnailParser/cues(in:)`` gives.
public struct WebVTTCue: Sendable, Hashable {
    /// The identifier as written; `""` when the cue has none (a browser's `TextTrackCue.id`).
    public var id: String
    /// Start, milliseconds.
    public var startMilliseconds: Int64
    /// End, milliseconds (may be at or before the start: browsers keep such cues).
    public var endMilliseconds: Int64
    /// The payload lines, joined by line feeds.
    public var text: String
    /// The 1-based line of the timing line.
    public var line: Int

    /// Creates a cue.
    public init(id: String, startMilliseconds: Int64, endMilliseconds: Int64, text: String, line: Int) {
        self.id = id
        self.startMilliseconds = startMilliseconds
        self.endMilliseconds = endMilliseconds
        self.text = text
        self.line = line
    }
}
