/// One cue of a thumbnail track: a time range and the image (or image region) shown for it.
public struct ThumbnailCue: Sendable, Hashable {
    /// Start of the cue in milliseconds (inclusive).
    public var startMilliseconds: Int64
    /// End of the cue in milliseconds (exclusive).
    public var endMilliseconds: Int64
    /// Index into ``ThumbnailTrack/images`` of the image this cue shows.
    public var imageIndex: Int32
    /// The part of the image this cue shows; `nil` for the whole image (or a ``tile``).
    public var region: SpatialRegion?
    /// The tile of a sheet this cue shows (HLS `EXT-X-TILES`, DASH thumbnail tiles), placed by the floor rule
    /// once the sheet's pixel size is known; `nil` when the cue has a ``region`` or shows the whole image.
    public var tile: TileCell?
    /// The cue identifier, when the track gives one.
    public var identifier: String?
    /// The cue identifier as a browser reports it (`TextTrackCue.id`): as written, `""` when the cue has none.
    public var id: String { identifier ?? "" }
    /// The 1-based line of the cue's timing line in the source.
    public var line: Int32

    /// Creates a cue.
    public init(
        startMilliseconds: Int64, endMilliseconds: Int64, imageIndex: Int32,
        region: SpatialRegion? = nil, identifier: String? = nil, line: Int32 = 0, tile: TileCell? = nil
    ) {
        self.tile = tile
        self.startMilliseconds = startMilliseconds
        self.endMilliseconds = endMilliseconds
        self.imageIndex = imageIndex
        self.region = region
        self.identifier = identifier
        self.line = line
    }

    /// Start of the cue in seconds.
    public var start: Double { Double(startMilliseconds) / 1000 }
    /// End of the cue in seconds.
    public var end: Double { Double(endMilliseconds) / 1000 }
}

/// One tile of a sheet of `columns x rows` equal tiles, filled left to right, then top to bottom.
public struct TileCell: Sendable, Hashable {
    /// Column, from 0.
    public var column: Int32
    /// Row, from 0.
    public var row: Int32
    /// Columns of the sheet.
    public var columns: Int32
    /// Rows of the sheet.
    public var rows: Int32

    /// Creates a tile.
    public init(column: Int32, row: Int32, columns: Int32, rows: Int32) {
        self.column = column
        self.row = row
        self.columns = columns
        self.rows = rows
    }

    /// The tile's pixels in a `width x height` sheet: column c spans floor(c·W/C) ..< floor((c+1)·W/C), row r
    /// spans floor(r·H/R) ..< floor((r+1)·H/R). `nil` when the sheet is too small to hold a pixel per tile.
    public func rect(sheetWidth width: Int, sheetHeight height: Int) -> PixelRect? {
        let c = Int(column)
        let r = Int(row)
        let columns = Int(self.columns)
        let rows = Int(self.rows)
        guard columns > 0, rows > 0, c < columns, r < rows else { return nil }
        let x0 = c * width / columns
        let x1 = (c + 1) * width / columns
        let y0 = r * height / rows
        let y1 = (r + 1) * height / rows
        guard x1 > x0, y1 > y0 else { return nil }
        return PixelRect(x: x0, y: y0, width: x1 - x0, height: y1 - y0)
    }
}
