public import FilmstripFormats

/// Where one thumbnail of a loaded source sits: its time range, its image and the pixel rectangle inside it.
public struct ThumbnailPlacement: Sendable, Hashable {
    /// Start of the thumbnail's time range, in seconds.
    public var start: Double
    /// End of the thumbnail's time range, in seconds.
    public var end: Double
    /// Index of its image in ``TrackThumbnails/imageURLs``.
    public var image: Int
    /// The rectangle of the image that is the thumbnail; `nil` when the whole image is.
    public var region: PixelRect?

    /// Creates a placement.
    public init(start: Double, end: Double, image: Int, region: PixelRect?) {
        self.start = start
        self.end = end
        self.image = image
        self.region = region
    }

    /// Every thumbnail of `source` in time order, its region resolved to pixels with the sizes `size` gives (read
    /// once per image).
    static func all(
        of source: ThumbnailSource, size: (Int) async throws -> (width: Int, height: Int)
    ) async throws -> [ThumbnailPlacement] {
        var sizes: [Int: (width: Int, height: Int)] = [:]
        var placements: [ThumbnailPlacement] = []
        for entry in source.allEntries() {
            var rect: PixelRect?
            switch entry.placement {
            case .whole:
                rect = nil
            case .region(let region) where region.unit == .pixel:
                rect = PixelRect(
                    x: Int(region.x), y: Int(region.y), width: Int(region.width), height: Int(region.height))
            case .region, .tile:
                do {
                    if sizes[entry.sheet] == nil {
                        sizes[entry.sheet] = try await size(entry.sheet)
                    }
                    let size = sizes[entry.sheet]!
                    rect = try entry.rect(sheetWidth: size.width, sheetHeight: size.height)
                } catch {
                    throw ThumbnailsError.wrap(error, url: source.sheets[entry.sheet])
                }
            }
            let (start, end) = (Double(entry.startMilliseconds) / 1000, Double(entry.endMilliseconds) / 1000)
            placements.append(ThumbnailPlacement(start: start, end: end, image: entry.sheet, region: rect))
        }
        return placements
    }
}
