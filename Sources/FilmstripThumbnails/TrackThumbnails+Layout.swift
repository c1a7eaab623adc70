public import FilmstripFormats
import FilmstripImaging
public import Foundation

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
}

extension TrackThumbnails {
    /// Every thumbnail of the loaded source in time order, with its region resolved to pixels: for a page or a
    /// renderer that draws previews from the sheets itself (CSS sprites, GPU textures) instead of asking for
    /// cropped thumbnails one by one.
    ///
    /// Pixel regions are taken as written; percent regions and grid or tile cells need the size of their image,
    /// which is read from its header (fetching the image if it is not local).
    ///
    /// ```swift
    /// for placement in try await thumbnails.layout() {
    ///     print(placement.start, thumbnails.imageURLs[placement.image], placement.region as Any)
    /// }
    /// ```
    /// - Throws: ``ThumbnailsError`` when nothing is loaded, or an image needed for a size cannot be had, or a
    ///   region lies outside its image.
    public func layout() async throws -> [ThumbnailPlacement] {
        guard let source = currentSource else {
            throw ThumbnailsError(.notLoaded, "no thumbnail track or grid is loaded")
        }
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
                        sizes[entry.sheet] = try await store.size(source, sheet: entry.sheet)
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

    /// The encoded bytes of image `index` of ``imageURLs`` (a sprite sheet, a single thumbnail, or a BIF's
    /// picture), from memory, the disk cache, the track's own resource or the network.
    ///
    /// - Throws: ``ThumbnailsError``: `.notLoaded`, `.unsupported` for an index out of range, or the fetch's error.
    public func imageData(at index: Int) async throws -> Data {
        guard let source = currentSource else {
            throw ThumbnailsError(.notLoaded, "no thumbnail track or grid is loaded")
        }
        guard source.sheets.indices.contains(index) else {
            throw ThumbnailsError(.unsupported, "the source has \(source.sheets.count) images, not \(index + 1)")
        }
        do {
            return try await store.fetch(source, sheet: index)
        } catch {
            throw ThumbnailsError.wrap(error, url: source.sheets[index])
        }
    }
}
