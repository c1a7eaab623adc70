import FilmstripImaging

/// A sheet in the memory caches: the load it belongs to and its identity (URL and byte range), so a live track's
/// refresh, which renumbers its sheets, keeps what is already decoded.
struct SheetKey: Hashable, Sendable {
    var generation: Int
    var image: String
}

/// A thumbnail in the memory cache: its load, its sheet, its time and its place in the sheet.
struct ThumbnailKey: Hashable, Sendable {
    var generation: Int
    var image: String
    var start: Int64
    var end: Int64
    var placement: ThumbnailEntry.Placement
}

/// A decoded sprite sheet and the format it was stored in (crops are encoded back in that format).
struct DecodedSheet: Sendable {
    var pixels: PixelBuffer
    var format: ImageFormat
}
