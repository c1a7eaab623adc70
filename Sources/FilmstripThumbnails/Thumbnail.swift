public import FilmstripFormats
public import FilmstripImaging
public import Foundation

/// The image for a moment of the video: encoded bytes of just that thumbnail and the time range it covers.
public struct Thumbnail: Sendable, Hashable {
    /// The encoded thumbnail. A region of a sprite sheet is cropped out and encoded in the sheet's format (JPEG
    /// sheets give JPEG thumbnails, PNG sheets PNG); a whole-image cue gives the image file unchanged.
    public var imageData: Data
    /// The format of ``imageData``.
    public var format: ImageFormat
    /// Start of the cue, in seconds.
    public var timeStampStart: Double
    /// End of the cue, in seconds.
    public var timeStampEnd: Double
    /// The image the thumbnail comes from, without fragment.
    public var sourceURL: URL
    /// The region of the source image, in pixels; `nil` for a whole-image cue.
    public var region: PixelRect?
    /// Width of the thumbnail in pixels.
    public var width: Int
    /// Height of the thumbnail in pixels.
    public var height: Int

    /// Creates a thumbnail.
    public init(
        imageData: Data, format: ImageFormat, timeStampStart: Double, timeStampEnd: Double, sourceURL: URL,
        region: PixelRect?, width: Int, height: Int
    ) {
        self.imageData = imageData
        self.format = format
        self.timeStampStart = timeStampStart
        self.timeStampEnd = timeStampEnd
        self.sourceURL = sourceURL
        self.region = region
        self.width = width
        self.height = height
    }
}
