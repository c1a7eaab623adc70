import FilmstripFormats
import FilmstripImaging
public import Foundation

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
        return try await ThumbnailPlacement.all(of: source) { [store] sheet in
            try await store.size(source, sheet: sheet)
        }
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
