import FilmstripLoading
public import Foundation
import Hummingbird
public import Logging
import NIOCore

/// `filmstrip serve`: a library page of the videos under some folders and a watch page per video whose scrub bar
/// shows preview thumbnails, with the JSON, event-stream and image endpoints behind them.
///
/// ```swift
/// let server = try LibraryServer(configuration: ServerConfiguration(libraries: [moviesFolder]))
/// try await server.run { url in print("serving \(url)") }
/// ```
///
/// Routes: `/` (library), `/watch/<path>` (watch page), `/media/<path>` (the video, with `Range` and `HEAD`),
/// `/api/track?src=` (cues as JSON), `/api/progress?src=` (server-sent events), `/api/thumbnail?src=&t=` (JPEG),
/// `/api/image?src=&i=` (a sheet of the track), and image URLs in Mux's scheme: `/videos.json` and
/// `/{id}/thumbnail.{jpg,png,webp}`. Only files under the configured folders are served.
public final class LibraryServer: Sendable {
    /// What the server was made with.
    public let configuration: ServerConfiguration
    let library: VideoLibrary
    let tracks: TrackStore
    let media: MediaInfo
    let images: ImageStore
    let storyboards: StoryboardStore
    let signing: URLSigning
    let logger: Logger

    /// A server over `configuration.libraries`. Throws when a folder does not exist.
    public init(configuration: ServerConfiguration, logger: Logger = Logger(label: "filmstrip.serve")) throws {
        self.configuration = configuration
        do {
            self.library = try VideoLibrary(directories: configuration.libraries, streams: configuration.remoteStreams)
        } catch let error as VideoLibrary.ResolveError {
            throw ServerError(error)
        }
        // A cache the server cannot write to would fail every generation: say so now.
        let probe = configuration.cacheDirectory.appendingPathComponent(".write-test-\(UUID().uuidString)")
        do {
            try FileManager.default.createDirectory(at: configuration.cacheDirectory, withIntermediateDirectories: true)
            try Data().write(to: probe)
            try FileManager.default.removeItem(at: probe)
        } catch {
            throw ServerError(
                status: 500, "cannot write to the cache directory \(configuration.cacheDirectory.path)",
                underlying: error)
        }
        self.logger = logger
        self.tracks = TrackStore(library: library, configuration: configuration, logger: logger)
        self.media = MediaInfo(
            width: configuration.frameThumbnailWidth, limit: ProcessInfo.processInfo.activeProcessorCount,
            addressPolicy: configuration.allowsPrivateAddresses ? .any : .publicOnly)
        self.images = ImageStore(
            media: media,
            disk: DiskCache(
                directory: configuration.cacheDirectory.appendingPathComponent("images", isDirectory: true),
                sizeLimit: configuration.imageCacheSize),
            queueLimit: configuration.imageQueueLimit)
        self.storyboards = StoryboardStore(
            cacheDirectory: configuration.cacheDirectory,
            trackOptions: {
                var options = configuration.trackOptions
                options.loading.addressPolicy = configuration.allowsPrivateAddresses ? .any : .publicOnly
                return options
            }(),
            parallel: max(1, configuration.maximumParallelGenerations))
        self.signing = try URLSigning(pems: configuration.signingKeys, required: configuration.requiresSignedURLs)
    }

    /// Binds and serves until the task is cancelled or the process gets SIGINT or SIGTERM. `onStart` gets the URL
    /// the server listens on (with the port picked, when the configuration asked for port 0).
    public func run(onStart: @escaping @Sendable (URL) -> Void = { _ in }) async throws {
        // `[::1]` is accepted as written in a URL.
        let written = configuration.host
        let host = written.hasPrefix("[") && written.hasSuffix("]") ? String(written.dropFirst().dropLast()) : written
        let app = Application(
            router: makeRouter(),
            configuration: ApplicationConfiguration(
                address: .hostname(host, port: configuration.port), serverName: "filmstrip"),
            onServerRunning: { [logger] channel in
                let port = channel.localAddress?.port ?? 0
                // An IPv6 address goes in brackets, its zone's `%` escaped.
                let shown = host.contains(":") ? "[\(host.replacingOccurrences(of: "%", with: "%25"))]" : host
                if let url = URL(string: "http://\(shown):\(port)/") {
                    onStart(url)
                } else {
                    logger.warning("listening, but \(host):\(port) makes no URL")
                }
            },
            logger: logger
        )
        do {
            try await app.runService()
        } catch let error as IOError {
            let reason = String(cString: strerror(error.errnoCode))
            throw ServerError(
                status: 500, "cannot listen on \(host):\(configuration.port): \(reason)", underlying: error)
        }
    }
}
