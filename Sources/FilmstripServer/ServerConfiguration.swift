import FilmstripMedia
public import FilmstripPreviews
public import Foundation

/// How `filmstrip serve` runs: which folders it serves, where it listens, where generated tracks go.
public struct ServerConfiguration: Sendable {
    /// The folders whose videos are served, searched recursively. Nothing outside them is ever served.
    public var libraries: [URL]
    /// The address to bind. The default, `127.0.0.1`, keeps the server on this machine; anything else is an
    /// explicit choice.
    public var host = "127.0.0.1"
    /// The port to bind; `0` picks a free one (reported by ``LibraryServer/run(onStart:)``).
    public var port = 8080
    /// Where tracks generated for videos without one are kept, one folder per video version. The libraries
    /// themselves are never written to.
    public var cacheDirectory: URL = ServerConfiguration.defaultCacheDirectory
    /// How many tracks are generated at once; further requests wait their turn. A second request for a video
    /// whose track is being generated waits on that generation.
    public var maximumParallelGenerations = 2
    /// The options of generated tracks: 2 s per thumbnail, 5x5 sheets, ``PreviewTrackConfiguration/Mode/auto`` (a scrub
    /// preview must show its own moment even when keyframes are far apart). `workers` is divided among the parallel
    /// generations.
    public var trackOptions: PreviewTrackConfiguration = {
        var options = PreviewTrackConfiguration()
        options.mode = .auto
        options.interval = 2
        options.columns = 5
        options.rows = 5
        return options
    }()
    /// The width of thumbnails taken straight from a video (posters, and `/api/thumbnail` before a track exists).
    public var frameThumbnailWidth = 320
    /// The most bytes of rendered images of image URLs kept on disk (in `cacheDirectory/images`). Default 256 MiB.
    public var imageCacheSize = 256 << 20
    /// The most different images of image URLs made at once, counting those waiting for a decoder; a request for
    /// another one then gets 503 with `Retry-After` rather than a longer queue. Default 256.
    public var imageQueueLimit = 256
    /// Public keys (RSA, PEM text) that sign image URLs, by the `kid` their tokens name. An image URL with a
    /// `token` is made from the token's claims when it verifies, and refused (403) when it does not.
    public var signingKeys: [String: String] = [:]
    /// Whether every image URL must carry a valid token (unsigned ones get 403). Needs a signing key.
    public var requiresSignedURLs = false
    /// Remote streams (HLS or DASH over http or https) served with image URLs beside the folders' videos, by id.
    public var remoteStreams: [(id: String, url: URL)] = []
    /// Whether the server may fetch from loopback, link-local and private addresses. Default `false`: a remote
    /// stream on such an address is refused (403), and so is any fetch, or redirect, that resolves to one.
    public var allowsPrivateAddresses = false

    /// Creates a configuration serving `libraries`.
    public init(libraries: [URL]) {
        self.libraries = libraries
    }

    /// Whether ``host`` keeps the server on this machine: `localhost`, `::1` or an address in 127.0.0.0/8.
    public var bindsLoopback: Bool { Self.isLoopback(host) }

    /// Whether a host name or address (IPv6 with or without brackets) is this machine's loopback.
    static func isLoopback(_ host: String) -> Bool {
        var name = host.lowercased()
        if name.hasPrefix("["), name.hasSuffix("]") { name = String(name.dropFirst().dropLast()) }
        if name == "localhost" || name == "::1" { return true }
        let parts = name.split(separator: ".", omittingEmptySubsequences: false)
        return parts.count == 4 && parts[0] == "127" && parts.allSatisfy { UInt8($0) != nil }
    }

    /// `$XDG_CACHE_HOME/filmstrip/serve`, else `~/.cache/filmstrip/serve`.
    public static var defaultCacheDirectory: URL {
        let environment = ProcessInfo.processInfo.environment
        let base =
            environment["XDG_CACHE_HOME"].flatMap { $0.isEmpty ? nil : URL(fileURLWithPath: $0, isDirectory: true) }
            ?? FileManager.default.homeDirectoryForCurrentUser.appendingPathComponent(".cache", isDirectory: true)
        return base.appendingPathComponent("filmstrip/serve", isDirectory: true)
    }
}
