public import FilmstripFormats
public import FilmstripImaging
public import FilmstripLoading
public import Foundation
public import Logging

/// Settings of a thumbnails API. Every property has a documented default.
public struct ThumbnailsConfiguration: Sendable {
    /// When a load completes.
    public enum LoadingMode: String, Sendable, Hashable {
        /// After the track is parsed and every referenced image is in the local cache (the default).
        case eager
        /// As soon as the track is parsed; images are fetched when first asked for.
        case lazy
    }

    /// When a load completes. Default ``LoadingMode/eager``.
    public var loadingMode: LoadingMode = .eager
    /// How a time maps to a cue. Default ``ThumbnailLookupPolicy/containing``.
    public var lookupPolicy: ThumbnailLookupPolicy = .containing
    /// Strict (default) or lenient WebVTT parsing.
    public var parsingMode: WebVTTThumbnailParser.Mode = .strict
    /// The disk cache directory; `nil` disables the disk cache (remote images then live only in memory).
    /// Default: ``DiskCache/defaultDirectory``.
    public var cacheDirectory: URL? = DiskCache.defaultDirectory
    /// The disk cache size limit in bytes. Default 512 MiB.
    public var diskCacheLimit: Int = 512 << 20
    /// Use only the disk cache, never the network. Default `false`.
    public var offline = false
    /// Rewrites every request the engine makes for tracks, manifests and images (headers, signed URLs), and is asked
    /// once more after a 401 or 403 to refresh credentials. Default `nil`.
    public var requestInterceptor: RequestInterceptor?
    /// From an HLS master or an MPD with several image tracks, take the one whose tile size is closest to this;
    /// `nil` (the default) takes the one with the largest tiles.
    public var preferredTileSize: PixelSize?

    /// Bytes of decoded sprite sheets kept in memory. Default 48 MiB (eleven 1600x900 sheets).
    public var decodedSheetMemoryLimit: Int = 48 << 20
    /// Bytes of encoded thumbnails kept in memory. Default 16 MiB.
    public var thumbnailMemoryLimit: Int = 16 << 20
    /// Without a disk cache, the bytes of remote sheets (as downloaded, not decoded) are kept in memory up to this
    /// many bytes, so an eager load's downloads serve later lookups instead of being fetched again. Not used with a
    /// disk cache, where the files stand in for them. Default 64 MiB.
    public var encodedSheetMemoryLimit: Int = 64 << 20
    /// Quality of thumbnails cropped out of JPEG sheets (libjpeg's scale) and WebP sheets (libwebp's scale; the crop
    /// stays WebP, as a PNG sheet's crop stays PNG). Default 90.
    public var jpegQuality: Int = 90
    /// Chroma subsampling of cropped JPEG thumbnails. Default 4:4:4, so re-encoding a crop adds no colour loss
    /// to what the sheet already has (a 160x90 crop costs a few hundred bytes more).
    public var jpegChromaSubsampling: JPEGCodec.ChromaSubsampling = .s444
    /// Images declaring more pixels than this are refused before decoding. Default 50 megapixels.
    public var imageLimits = ImageLimits.default
    /// Timeouts, size limit, retries and headers for fetching.
    public var loading = LoadingConfiguration(maximumResponseSize: 32 << 20)
    /// How many images an eager load fetches at once. Default 6.
    public var maximumConcurrentDownloads = 6
    /// Downloads at a time for ``TrackThumbnails/prefetch(around:direction:)``. Default 2: downloads share the
    /// viewer's link, and on a slow one (2 Mbit/s) four at a time made the sheet under the pointer wait for the
    /// others (`FilmstripBench scrub`).
    public var prefetchConcurrency = 2
    /// The clock live tracks wait on between reloads. Default `ContinuousClock()`; tests pass a test clock.
    public var clock: any Clock<Duration> = ContinuousClock()
    /// The wall clock that says which segments of a live MPD exist now (corrected by its `UTCTiming`). Default: the
    /// system time.
    public var wallClock: @Sendable () -> Date = { Date() }
    /// Where the engine logs; nothing is logged by default.
    public var logger: Logger?

    /// The defaults.
    public init() {}
}
