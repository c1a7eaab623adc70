import Foundation

/// What a ``Downloader`` takes from a stream, and how.
///
/// ```swift
/// var choice = DownloadConfiguration()
/// choice.maximumHeight = 720
/// choice.audioLanguages = ["en", "fr"]
/// ```
public struct DownloadConfiguration: Sendable, Hashable {
    /// The tallest video to take: the video rendition is the highest-bandwidth one at most this tall (and within
    /// ``maximumBandwidth``); when none is, the smallest. `nil` (the default): no limit.
    public var maximumHeight: Int?
    /// The most bits per second the video rendition may declare (`BANDWIDTH`, `@bandwidth`); `nil`: no limit.
    public var maximumBandwidth: Int?
    /// The audio tracks to take by language (`en` also takes `en-GB` and `eng`); `nil` (the default) takes the
    /// stream's default track (`DEFAULT=YES`, else the first); an empty list takes none.
    public var audioLanguages: [String]?
    /// Whether to take the stream's preview track (its image track, else its I-frame playlist) when it has one
    /// (default `true`).
    public var previews = true
    /// How many files are fetched at once (default 4, at least 1).
    public var concurrency = 4
    /// Bytes that must stay free on the download's disk beyond the download's estimated size (default 64 MiB): the
    /// check is made before the first byte is fetched.
    public var reservedSpace: Int64 = 64 << 20

    public init() {}
}
