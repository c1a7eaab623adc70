import FilmstripFormats
import FilmstripImaging
import Foundation

/// What a loaded track or grid answers for a time: which sheet, where in it, and the cue's time range.
struct ThumbnailEntry: Sendable, Hashable {
    enum Placement: Sendable, Hashable {
        case whole
        case region(SpatialRegion)
        case tile(TileCell)
    }

    /// Cue index (tracks) or cell number (grids): unique within a source.
    var key: Int
    var sheet: Int
    var startMilliseconds: Int64
    var endMilliseconds: Int64
    var placement: Placement

    /// The pixel rectangle in a sheet of the given size; `nil` for the whole image. Throws when the region lies
    /// outside the sheet.
    func rect(sheetWidth: Int, sheetHeight: Int) throws(ImagingError) -> PixelRect? {
        switch placement {
        case .whole:
            return nil
        case .region(let region):
            guard let rect = region.resolved(imageWidth: sheetWidth, imageHeight: sheetHeight) else {
                throw ImagingError(
                    .invalidGeometry, "the region \(region) lies outside the \(sheetWidth)x\(sheetHeight) image")
            }
            return rect
        case .tile(let tile):
            guard let rect = tile.rect(sheetWidth: sheetWidth, sheetHeight: sheetHeight) else {
                throw ImagingError(
                    .invalidGeometry,
                    "a \(sheetWidth)x\(sheetHeight) sheet cannot hold a \(tile.columns)x\(tile.rows) grid of tiles")
            }
            return rect
        }
    }
}

/// A loaded track or grid, immutable once built.
struct ThumbnailSource: Sendable {
    enum Kind: Sendable {
        case track(ThumbnailTrack, ThumbnailIndex)
        case grid(GridThumbnail)
    }

    let kind: Kind
    /// Distinct images, by sheet number.
    let sheets: [URL]
    /// The part of each sheet's resource that holds it (`nil`: all of it).
    let sheetRanges: [Range<Int64>?]
    /// The bytes of the track's own resource, when its images live inside it (BIF): sheets of that URL are sliced
    /// from them, never fetched.
    let embedded: (url: URL, data: Data)?
    /// Bumped on every load, so caches never mix entries of two sources.
    let generation: Int
    /// A live track's window (its first cue's start to its last cue's end): lookups outside it find nothing.
    var liveWindow: ClosedRange<Double>?

    init(track: ThumbnailTrack, generation: Int, embedded: Data? = nil, live: Bool = false) {
        if live, let first = track.cues.first {
            let end = track.cues.map(\.endMilliseconds).max() ?? first.endMilliseconds
            liveWindow = first.start...(Double(end) / 1000)
        }
        kind = .track(track, ThumbnailIndex(cues: track.cues))
        sheets = track.images
        sheetRanges = track.images.indices.map { track.byteRange(ofImage: $0) }
        self.embedded = embedded.map { (track.sourceURL, $0) }
        self.generation = generation
    }

    init(grid: GridThumbnail, generation: Int) {
        kind = .grid(grid)
        sheets = grid.sheetURLs
        sheetRanges = Array(repeating: nil, count: grid.sheetURLs.count)
        embedded = nil
        liveWindow = nil
        self.generation = generation
    }

    /// The identity of sheet `index`: its URL and byte range.
    func identity(ofSheet index: Int) -> String {
        let url = sheets[index].absoluteString
        guard let range = sheetRanges[index] else { return url }
        return url + "#bytes=\(range.lowerBound)-\(range.upperBound)"
    }

    /// The memory-cache key of sheet `index`.
    func sheetKey(_ index: Int) -> SheetKey { SheetKey(generation: generation, image: identity(ofSheet: index)) }

    /// The memory-cache key of an entry's thumbnail.
    func thumbnailKey(_ entry: ThumbnailEntry) -> ThumbnailKey {
        ThumbnailKey(
            generation: generation, image: identity(ofSheet: entry.sheet), start: entry.startMilliseconds,
            end: entry.endMilliseconds, placement: entry.placement)
    }

    /// The format the source was read from.
    var format: ThumbnailFormat {
        switch kind {
        case .track(let track, _): track.format
        case .grid: .grid
        }
    }

    /// The image in a sheet's fetched bytes: the bytes themselves, or for an I-frame image sequence the JPEG of the
    /// fragment they hold.
    func image(in bytes: Data) throws -> Data {
        guard format == .iFrameImages else { return bytes }
        do {
            return try ImageIFrameSequence.image(inFragment: bytes)
        } catch {
            throw ThumbnailsError(.decode, "an I-frame image fragment: \(error)", underlying: error)
        }
    }

    /// The bytes of sheet `index` when they are inside the track's own resource.
    func embeddedBytes(ofSheet index: Int) -> Data? {
        guard let embedded, sheets[index] == embedded.url, let range = sheetRanges[index],
            range.upperBound <= Int64(embedded.data.count)
        else { return nil }
        let start = embedded.data.startIndex + Int(range.lowerBound)
        return embedded.data.subdata(in: start..<(start + range.count))
    }

    var entryCount: Int {
        switch kind {
        case .track(let track, _): track.cues.count
        case .grid(let grid): grid.cellCount
        }
    }

    func entry(at t: Double, policy: ThumbnailLookupPolicy) -> ThumbnailEntry? {
        if let window = liveWindow, !window.contains(t) { return nil }
        switch kind {
        case .track(let track, let index):
            guard let i = index.lookup(t, policy: policy) else { return nil }
            return entry(cue: i, in: track)
        case .grid(let grid):
            guard let cell = grid.cell(at: t, policy: policy) else { return nil }
            return entry(cell: cell, in: grid)
        }
    }

    /// Every entry, in time order.
    func allEntries() -> [ThumbnailEntry] {
        switch kind {
        case .track(let track, _):
            return track.cues.indices.map { entry(cue: $0, in: track) }
        case .grid(let grid):
            return (0..<grid.cellCount).compactMap { grid.cell(number: $0).map { entry(cell: $0, in: grid) } }
        }
    }

    private func entry(cue i: Int, in track: ThumbnailTrack) -> ThumbnailEntry {
        let cue = track.cues[i]
        return ThumbnailEntry(
            key: i, sheet: Int(cue.imageIndex), startMilliseconds: cue.startMilliseconds,
            endMilliseconds: cue.endMilliseconds,
            placement: cue.region.map { .region($0) } ?? cue.tile.map { .tile($0) } ?? .whole)
    }

    private func entry(cell: GridCell, in grid: GridThumbnail) -> ThumbnailEntry {
        ThumbnailEntry(
            key: cell.number, sheet: cell.sheetIndex - grid.firstIndex, startMilliseconds: cell.startMilliseconds,
            endMilliseconds: cell.endMilliseconds,
            placement: .tile(
                TileCell(
                    column: Int32(cell.column), row: Int32(cell.row), columns: Int32(grid.gridWidth),
                    rows: Int32(grid.gridHeight))))
    }
}
