public import FilmstripSync
public import Foundation

/// Why a catalog run, or one item of it, could not go on.
public struct CatalogError: ChainedError, Sendable {
    /// The category.
    public enum Kind: String, Sendable, Hashable, Codable {
        /// The list of videos cannot be read or has a line that is not a path or an http(s) URL.
        case invalidList = "invalid_list"
        /// The shard cannot be worked out (a bad `--shard`, or an environment that does not say the count).
        case invalidShard = "invalid_shard"
        /// The generation settings are out of range (checked before the catalog is touched).
        case invalidSettings = "invalid_settings"
        /// The catalog directory cannot be created, written or read.
        case storage
        /// An item's input cannot be identified (a missing file, an HTTP error).
        case inputUnavailable = "input_unavailable"
    }

    /// The category.
    public var kind: Kind
    /// A message for people.
    public var message: String
    /// The file or URL concerned.
    public var url: URL?
    /// The 1-based line of the list, for ``Kind/invalidList``.
    public var line: Int?
    /// The error underneath, if any.
    public var underlying: (any Error)?

    /// Creates an error.
    public init(_ kind: Kind, _ message: String, url: URL? = nil, line: Int? = nil, underlying: (any Error)? = nil) {
        self.kind = kind
        self.message = message
        self.url = url
        self.line = line
        self.underlying = underlying
    }

    /// The input (with its line) and the message; the description adds the causes.
    public var headline: String {
        var text = message
        if let url {
            text = (url.isFileURL ? url.path : url.absoluteString) + (line.map { ":\($0)" } ?? "") + ": " + text
        }
        return text
    }

    /// The underlying error.
    public var cause: (any Error)? { underlying }
}
