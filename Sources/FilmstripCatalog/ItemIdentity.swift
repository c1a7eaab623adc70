public import FilmstripLoading
import FilmstripMedia
public import FilmstripPreviews
public import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// What makes an item's input this version of it.
///
/// A file: its path, size and modification time (to the nanosecond), read with one `stat`. An http(s) URL: the URL,
/// its `ETag` or `Last-Modified` and its length, read with one `GET` of a single byte (`Range: bytes=0-0`), so a
/// rerun over a catalog of remote videos costs one tiny request per item. A server that sends neither validator
/// is known by URL and length only: use `--force` after replacing a video with one of the same length there.
public struct ItemIdentity: Sendable, Hashable, Codable {
    /// The file path or the URL.
    public var location: String
    /// Bytes.
    public var size: Int64
    /// A file's modification time, `seconds.nanoseconds` since 1970.
    public var modified: String?
    /// The server's `ETag`.
    public var etag: String?
    /// The server's `Last-Modified`.
    public var lastModified: String?

    /// Creates an identity.
    public init(
        location: String, size: Int64, modified: String? = nil, etag: String? = nil, lastModified: String? = nil
    ) {
        self.location = location
        self.size = size
        self.modified = modified
        self.etag = etag
        self.lastModified = lastModified
    }

    /// The identity of a local file.
    public static func ofFile(_ url: URL) throws(CatalogError) -> ItemIdentity {
        var info = stat()
        guard stat(url.path, &info) == 0 else {
            let reason = String(cString: strerror(errno))
            throw CatalogError(.inputUnavailable, "cannot read the video: \(reason)", url: url)
        }
        guard (info.st_mode & S_IFMT) == S_IFREG else {
            throw CatalogError(.inputUnavailable, "not a regular file", url: url)
        }
        #if canImport(Darwin)
            let time = info.st_mtimespec
        #else
            let time = info.st_mtim
        #endif
        return ItemIdentity(
            location: url.path, size: Int64(info.st_size),
            modified: "\(time.tv_sec).\(String(format: "%09ld", time.tv_nsec))")
    }

    /// The identity of an http(s) resource, from a one-byte request through `transport`.
    public static func ofRemote(
        _ url: URL, loading: LoadingConfiguration, transport: any DataLoading
    ) async throws
        -> ItemIdentity
    {
        var configuration = loading
        configuration.retry = .none
        let request = ByteRangeRequest(url: url, range: 0..<1)
        let response: LoadResponse
        do {
            response = try await transport.load(url, configuration: request.applied(to: configuration))
        } catch let error as LoadingError {
            throw CatalogError(.inputUnavailable, error.message, url: url, underlying: error)
        }
        var size = Int64(response.data.count)
        if response.statusCode == 206 {
            // "bytes 0-0/total"
            guard let total = request.placement(of: response).total else {
                throw CatalogError(.inputUnavailable, "a partial response without the resource's length", url: url)
            }
            size = total
        }
        return ItemIdentity(
            location: url.absoluteString, size: size, etag: response.headers["etag"],
            lastModified: response.headers["last-modified"])
    }

    /// One line per field, in a fixed order.
    var canonical: String {
        [location, "\(size)", modified ?? "-", etag ?? "-", lastModified ?? "-"].joined(separator: "\n")
    }
}

/// The name of an item's outputs: SHA-256 over the item's identity and the catalog's settings, as 32 hex digits
/// (128 bits). A changed video or changed settings give a new key; the same ones give the same key in any process
/// on any node.
public struct ContentKey: Sendable, Hashable, Codable, CustomStringConvertible {
    /// 32 lowercase hex digits.
    public let hex: String

    /// The key of `identity` under `settings`.
    public init(identity: ItemIdentity, settings: PreviewOutputSettings) {
        hex = settings.contentKey(of: identity.canonical)
    }

    /// A key read back from a file name or a record; `nil` unless it is 32 lowercase hex digits.
    public init?(hex: String) {
        guard hex.utf8.count == 32, hex.utf8.allSatisfy({ (48...57).contains($0) || (97...102).contains($0) }) else {
            return nil
        }
        self.hex = hex
    }

    public var description: String { hex }

    public init(from decoder: any Decoder) throws {
        let text = try decoder.singleValueContainer().decode(String.self)
        guard let key = ContentKey(hex: text) else {
            throw DecodingError.dataCorrupted(.init(codingPath: decoder.codingPath, debugDescription: "not a key"))
        }
        self = key
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(hex)
    }
}
