import FilmstripImaging

struct SheetKey: Hashable, Sendable {
    var generation: Int
    var sheet: Int
}

struct ThumbnailKey: Hashable, Sendable {
    var generation: Int
    var entry: Int
}

/// A decoded sprite sheet and the format it was stored in (crops are encoded back in that format).
struct DecodedSheet: Sendable {
    var pixels: PixelBuffer
    var format: ImageFormat
}
