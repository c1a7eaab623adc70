public import Foundation

/// A parsed thumbnail track: cues sorted by start time, the distinct images they refer to, and
/// whatever the parser had to say about the source.
public struct ThumbnailTrack: Sendable {
    /// The URL the track was parsed against; relative image references were resolved against it.
    public var sourceURL: URL
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
}
