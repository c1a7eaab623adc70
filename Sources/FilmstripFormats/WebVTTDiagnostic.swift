/// A problem found while parsing a WebVTT thumbnail track, with its position in the source.
///
/// In strict mode the first problem that makes a cue unusable is thrown as a ``WebVTTParseError``;
/// in lenient mode the cue is skipped and the problem is collected in ``ThumbnailTrack/diagnostics``.
/// Lines and columns are 1-based; the column counts UTF-8 bytes from the start of the line.
public struct WebVTTDiagnostic: Sendable, Hashable, CustomStringConvertible {
    /// What kind of problem this is.
    public enum Kind: String, Sendable, Hashable {
        /// The file does not start with `WEBVTT` followed by a space, a tab or the end of the line.
        case missingHeader
        /// A timestamp does not follow `[hh+:]mm:ss.ttt`.
        case invalidTimestamp
        /// The timing line is not `start --> end [settings]`.
        case invalidTimingLine
        /// The cue's end time is not after its start time.
        case emptyTimeRange
        /// A cue has no payload line.
        case missingImageReference
        /// The image reference cannot be turned into a URL, or uses an unsupported scheme.
        case invalidImageReference
        /// A track fetched over the network refers to a `file:` URL.
        case localReferenceFromRemoteTrack
        /// The fragment of an image reference is not a valid spatial media fragment.
        case invalidFragment
        /// A `STYLE` or `REGION` block after the first cue.
        case misplacedBlock
        /// A block that is neither a cue, a comment, nor a header block.
        case unexpectedBlock
        /// A cue with more than one payload line; the first line is used.
        case extraPayloadLines
        /// More cues than ``WebVTTThumbnailParser/maximumCues`` (an error in both modes).
        case tooManyCues
    }

    /// What kind of problem this is.
    public var kind: Kind
    /// The 1-based line of the problem.
    public var line: Int
    /// The 1-based column (in UTF-8 bytes) of the problem.
    public var column: Int
    /// A human-readable explanation.
    public var message: String
    /// The offending line of the source, as text.
    public var snippet: String

    /// Creates a diagnostic.
    public init(kind: Kind, line: Int, column: Int, message: String, snippet: String) {
        self.kind = kind
        self.line = line
        self.column = column
        self.message = excerpted(message)
        self.snippet = snippet
    }

    /// `line:column: message`, the form compilers use.
    public var description: String { "\(line):\(column): \(message)" }
}

/// The error thrown by the strict WebVTT parser: the first fatal ``WebVTTDiagnostic``.
public struct WebVTTParseError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The problem that stopped the parse.
    public var diagnostic: WebVTTDiagnostic

    /// Creates an error from a diagnostic.
    public init(_ diagnostic: WebVTTDiagnostic) { self.diagnostic = diagnostic }

    /// The 1-based line of the problem.
    public var line: Int { diagnostic.line }
    /// The 1-based column of the problem.
    public var column: Int { diagnostic.column }
    /// A human-readable explanation.
    public var message: String { diagnostic.message }
    /// The offending line of the source.
    public var snippet: String { diagnostic.snippet }
    /// `line:column: message`.
    public var description: String { diagnostic.description }
}
