@_exported public import FilmstripFormats
@_exported public import FilmstripImaging
@_exported public import FilmstripLoading
@_exported public import FilmstripMedia
@_exported public import FilmstripThumbnails
import Foundation
import Synchronization

/// The Filmstrip SDK entry point.
///
/// ```swift
/// import Filmstrip
///
/// let thumbnails = Filmstrip.shared.thumbnails()
/// thumbnails.loadThumbnailsFrom(webVTTtrack: trackURL) { error in
///     guard error == nil else { return }
///     let thumbnail = thumbnails.getThumbnail(atTimestamp: 12.0)   // imageData, timeStampStart, timeStampEnd
/// }
/// ```
public final class Filmstrip: Sendable {
    /// The shared SDK instance.
    public static let shared = Filmstrip()

    /// The thumbnail engines.
    public enum ThumbnailEngine: String, Sendable, Hashable, CaseIterable {
        /// Preview tracks: WebVTT thumbnail tracks and grid templates, with disk cache and offline reuse.
        case tracks
    }

    private let defaults = Mutex(ThumbnailsConfiguration())
    /// Loaders are shared by engines whose cache and loading settings are equal.
    private struct LoaderKey: Hashable {
        var cacheDirectory: URL?
        var diskCacheLimit: Int
        var loading: LoadingConfiguration
    }

    private let loaders = Mutex([LoaderKey: ResourceLoader]())

    /// Creates an SDK instance; most apps use ``shared``.
    public init() {}

    /// SDK-wide defaults for new thumbnails APIs.
    public var thumbnailsConfiguration: ThumbnailsConfiguration {
        get { defaults.withLock { $0 } }
        set { defaults.withLock { $0 = newValue } }
    }

    /// A thumbnails API. Engines made with the same cache directory and loading settings share one loader (one
    /// URL session, one disk cache index, one set of in-flight downloads).
    public func thumbnails(
        engine: ThumbnailEngine = .tracks, configuration: ThumbnailsConfiguration? = nil
    )
        -> TrackThumbnails
    {
        let configuration = configuration ?? thumbnailsConfiguration
        let key = LoaderKey(
            cacheDirectory: configuration.cacheDirectory?.standardizedFileURL,
            diskCacheLimit: configuration.diskCacheLimit, loading: configuration.loading)
        let loader = loaders.withLock { loaders -> ResourceLoader in
            if let existing = loaders[key] { return existing }
            let made = ResourceLoader(
                configuration: configuration.loading,
                diskCache: configuration.cacheDirectory.map {
                    DiskCache(directory: $0, sizeLimit: configuration.diskCacheLimit)
                },
                logger: configuration.logger)
            loaders[key] = made
            return made
        }
        switch engine {
        case .tracks: return TrackThumbnails(configuration: configuration, loader: loader)
        }
    }
}
