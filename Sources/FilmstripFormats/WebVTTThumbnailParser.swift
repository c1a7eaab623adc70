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
}
