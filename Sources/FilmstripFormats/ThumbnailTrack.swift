public import Foundation

/// A parsed thumbnail track, in any of the formats Filmstrip reads: cues sorted by start time, the distinct images
/// they refer to, and whatever the parser had to say about the source.
public struct ThumbnailTrack: Sendable {
    /// The URL the track was parsed against; relative image references were resolved against it.
    public var sourceURL: URL
    /// The format the track was read from.
    public var format: ThumbnailFormat = .webVTT
    /// For each image, the part of its resource that holds it (`EXT-X-BYTERANGE`, a BIF's index); `nil` entries
    /// (or an empty array) mean the whole resource.
    public var imageByteRanges: [Range<Int64>?] = []
    /// For each image, the pixel size the source declares for it (HLS `EXT-X-TILES` resolution times layout, DASH
    /// `width`/`height`); `nil` entries (or an empty array) when it declares none.
    public var declaredImageSizes: [PixelSize?] = []
    /// What reading the source found that players trip over (format-specific warnings).
    public var findings: [TrackFinding] = []
    /// The cues, sorted by start time (stable: cues with equal starts keep their source order).
    public var cues: [ThumbnailCue]
    /// The distinct images referred to by the cues, without fragments, in order of first use.
    public var images: [URL]
    /// Problems that did not stop the parse (all of them, in lenient mode).
    public var diagnostics: [WebVTTDiagnostic]

    /// Creates a track.
    public init(sourceURL: URL, cues: [ThumbnailCue], images: [URL], diagnostics: [WebVTTDiagnostic] = []) {
        self.sourceURL = sourceURL
        self.cues = cues
        self.images = images
        self.diagnostics = diagnostics
    }

    /// The image URL (without fragment) of a cue.
    public func imageURL(of cue: ThumbnailCue) -> URL { images[Int(cue.imageIndex)] }

    /// The byte range of image `index` within its resource, `nil` for all of it.
    public func byteRange(ofImage index: Int) -> Range<Int64>? {
        index < imageByteRanges.count ? imageByteRanges[index] : nil
    }
}

/// The formats of thumbnail tracks.
public enum ThumbnailFormat: String, Sendable, Hashable, CaseIterable {
    /// A WebVTT track with `#xywh=` regions.
    case webVTT = "webvtt"
    /// A master-grid template.
    case grid
    /// An HLS image media playlist (`EXT-X-IMAGES-ONLY`, `EXT-X-TILES`).
    case hls
    /// A DASH thumbnail-tile AdaptationSet.
    case dash
    /// A Roku BIF archive.
    case bif
    /// Storyboard JSON (Mux's schema, or the object array).
    case json
    /// An HLS I-frame image sequence: an `EXT-X-I-FRAMES-ONLY` playlist whose entries are fragments of MP4, each
    /// one JPEG sample (``ImageIFrameSequence``); an image is the payload of its fragment's `mdat`.
    case iFrameImages = "iframe-images"
}
