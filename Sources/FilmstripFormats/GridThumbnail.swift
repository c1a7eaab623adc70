public import Foundation

/// A master-grid template: numbered sprite sheets, each a grid of equally sized cells that cover equal time.
///
/// Cell `k` (`k = floor(t * 1000 / durationMs)`) lies in sheet `firstIndex + k / (columns * rows)`, filled left to
/// right and top to bottom. Cell size is the sheet size divided by the grid.
///
/// ```swift
/// // Explicit template: https://cdn.example/thumbs/1_7.jpg … 7_7.jpg
/// let grid = try GridThumbnail(baseUrl: URL(string: "https://cdn.example/thumbs")!, pathTemplate: "$index$_7.jpg",
///                              gridHeight: 10, gridWidth: 10, durationMs: 10_000, maxIndex: 7)
/// // Single URL: maxIndex comes from the number after the last underscore of the file name.
/// let same = try GridThumbnail(baseUrl: URL(string: "https://cdn.example/thumbs/$index$_7.jpg")!,
///                              gridHeight: 10, gridWidth: 10, durationMs: 10_000)
/// ```
public struct GridThumbnail: Sendable, Hashable {
    /// The placeholder replaced by the sheet number.
    public static let indexPlaceholder = "$index$"

    /// The URL the template is relative to, or (single-URL form) the whole template.
    public var baseUrl: URL
    /// The path of a sheet relative to ``baseUrl``, containing `$index$`; `nil` in the single-URL form.
    public var pathTemplate: String?
    /// Columns per sheet.
    public var gridWidth: Int
    /// Rows per sheet.
    public var gridHeight: Int
    /// Time covered by one cell, in milliseconds.
    public var durationMs: Int
    /// The number of the last sheet.
    public var maxIndex: Int
    /// The number of the first sheet: 1 (the default) or 0.
    public var firstIndex: Int

    /// Creates a grid from a base URL and a path template.
    ///
    /// - Throws: ``GridThumbnailError`` when a dimension is not positive, the template has no `$index$`,
    ///   or `maxIndex` is before `firstIndex`.
    public init(
        baseUrl: URL, pathTemplate: String, gridHeight: Int, gridWidth: Int, durationMs: Int, maxIndex: Int,
        firstIndex: Int = 1
    ) throws(GridThumbnailError) {
        self.baseUrl = baseUrl
        self.pathTemplate = pathTemplate
        self.gridWidth = gridWidth
        self.gridHeight = gridHeight
        self.durationMs = durationMs
        self.maxIndex = maxIndex
        self.firstIndex = firstIndex
        try validate()
    }

    /// Creates a grid from a single URL that holds the whole template, such as `…/thumbs/$index$_7.jpg`.
    ///
    /// When `maxIndex` is `nil` it is the number after the last underscore of the file name (7 above).
    public init(
        baseUrl: URL, gridHeight: Int, gridWidth: Int, durationMs: Int, maxIndex: Int? = nil, firstIndex: Int = 1
    ) throws(GridThumbnailError) {
        self.baseUrl = baseUrl
        self.pathTemplate = nil
        self.gridWidth = gridWidth
        self.gridHeight = gridHeight
        self.durationMs = durationMs
        self.firstIndex = firstIndex
        if let maxIndex {
            self.maxIndex = maxIndex
        } else {
            guard let derived = Self.maxIndex(fromTemplate: baseUrl.absoluteString.removingPercentEncoding ?? "")
            else {
                throw .cannotDeriveMaxIndex(baseUrl.absoluteString)
            }
            self.maxIndex = derived
        }
        try validate()
    }

    /// The number after the last underscore of the template's file name, as in `$index$_7.jpg`.
    public static func maxIndex(fromTemplate template: String) -> Int? {
        let fileName = template.split(separator: "/", omittingEmptySubsequences: false).last ?? ""
        guard let underscore = fileName.lastIndex(of: "_") else { return nil }
        let digits = fileName[fileName.index(after: underscore)...].prefix(while: \.isASCII).prefix { $0.isNumber }
        return Int(digits)
    }

    private func validate() throws(GridThumbnailError) {
        guard gridWidth > 0, gridHeight > 0, gridWidth <= Self.maximumSide, gridHeight <= Self.maximumSide else {
            throw .invalidGrid(columns: gridWidth, rows: gridHeight)
        }
        guard durationMs > 0, durationMs <= Self.maximumCellMilliseconds else { throw .invalidDuration(durationMs) }
        guard firstIndex == 0 || firstIndex == 1 else { throw .invalidFirstIndex(firstIndex) }
        guard maxIndex >= firstIndex else { throw .invalidMaxIndex(maxIndex) }
        // Checked before any product is formed: columns × rows × sheets is at most maximumCells.
        guard maxIndex - firstIndex < Self.maximumCells / (gridWidth * gridHeight) else {
            // The count itself may be past Int.max (maxIndex Int.max from 0): the error says Int.max.
            let (sheets, overflow) = (maxIndex - firstIndex).addingReportingOverflow(1)
            throw .tooManyCells(columns: gridWidth, rows: gridHeight, sheets: overflow ? Int.max : sheets)
        }
        let template = pathTemplate ?? (baseUrl.absoluteString.removingPercentEncoding ?? "")
        guard template.contains(Self.indexPlaceholder) else { throw .missingPlaceholder(template) }
    }

    /// The most columns, or rows, of a sheet: 10,000.
    public static let maximumSide = 10_000
    /// The most cells over all sheets: 100 million (a cell a second for over three years).
    public static let maximumCells = 100_000_000
    /// The longest cell: 24 hours.
    public static let maximumCellMilliseconds = 86_400_000

    /// Cells per sheet.
    public var cellsPerSheet: Int { gridWidth * gridHeight }
    /// Number of sheets.
    public var sheetCount: Int { maxIndex - firstIndex + 1 }
    /// Number of cells over all sheets.
    public var cellCount: Int { sheetCount * cellsPerSheet }
    /// Time covered by all cells, in seconds.
    public var duration: Double { Double(cellCount) * Double(durationMs) / 1000 }

    /// The URL of sheet `index` (a number from ``firstIndex`` to ``maxIndex``).
    public func sheetURL(index: Int) -> URL? {
        let number = String(index)
        if let pathTemplate {
            let path = pathTemplate.replacingOccurrences(of: Self.indexPlaceholder, with: number)
            var base = baseUrl.absoluteString
            if !base.hasSuffix("/") { base += "/" }
            return URL(string: path, relativeTo: URL(string: base))?.absoluteURL
        }
        let template = baseUrl.absoluteString.replacingOccurrences(of: "%24index%24", with: Self.indexPlaceholder)
        return URL(string: template.replacingOccurrences(of: Self.indexPlaceholder, with: number))
    }

    /// Every sheet URL, in order.
    public var sheetURLs: [URL] { (firstIndex...maxIndex).compactMap { sheetURL(index: $0) } }

    /// The cell for time `t` (seconds), or `nil` before zero or past the last cell.
    public func cell(at t: Double) -> GridCell? {
        guard t.isFinite, t >= 0 else { return nil }
        let k = (t * 1000 / Double(durationMs)).rounded(.down)
        guard k < Double(cellCount) else { return nil }
        return cell(number: Int(k))
    }

    /// Cell number `k` (0-based over all sheets), or `nil` when out of range.
    public func cell(number k: Int) -> GridCell? {
        guard k >= 0, k < cellCount else { return nil }
        let inSheet = k % cellsPerSheet
        return GridCell(
            number: k, sheetIndex: firstIndex + k / cellsPerSheet, column: inSheet % gridWidth,
            row: inSheet / gridWidth,
            startMilliseconds: Int64(k) * Int64(durationMs), endMilliseconds: Int64(k + 1) * Int64(durationMs))
    }

    /// The cell chosen for `t` under a lookup policy (see ``ThumbnailLookupPolicy``).
    public func cell(at t: Double, policy: ThumbnailLookupPolicy) -> GridCell? {
        guard !t.isNaN else { return nil }
        switch policy {
        case .containing:
            return cell(at: t)
        case .nearest:
            return cell(at: t) ?? cell(number: t < 0 ? 0 : cellCount - 1)
        case .nextCue:
            // Cells are contiguous: the first cell starting at or after t.
            guard t > 0 else { return cell(number: 0) }
            let k = (t * 1000 / Double(durationMs)).rounded(.up)
            return cell(number: k < Double(cellCount) ? Int(k) : cellCount - 1)
        }
    }
}

/// One cell of a ``GridThumbnail``.
public struct GridCell: Sendable, Hashable {
    /// 0-based cell number over all sheets.
    public var number: Int
    /// The sheet number (as substituted for `$index$`).
    public var sheetIndex: Int
    /// 0-based column in the sheet.
    public var column: Int
    /// 0-based row in the sheet.
    public var row: Int
    /// Start of the cell's time in milliseconds.
    public var startMilliseconds: Int64
    /// End of the cell's time in milliseconds (exclusive).
    public var endMilliseconds: Int64

    /// The cell's rectangle in a sheet of the given size: sheet size divided by the grid.
    public func rect(sheetWidth: Int, sheetHeight: Int, columns: Int, rows: Int) -> PixelRect {
        let w = sheetWidth / columns
        let h = sheetHeight / rows
        return PixelRect(x: column * w, y: row * h, width: w, height: h)
    }
}

/// Why a ``GridThumbnail`` could not be made.
public enum GridThumbnailError: Error, Sendable, Hashable, CustomStringConvertible {
    /// Columns and rows must be positive, and at most ``GridThumbnail/maximumSide``.
    case invalidGrid(columns: Int, rows: Int)
    /// Columns × rows × sheets is more than ``GridThumbnail/maximumCells``.
    case tooManyCells(columns: Int, rows: Int, sheets: Int)
    /// The duration of a cell must be positive, and at most ``GridThumbnail/maximumCellMilliseconds``.
    case invalidDuration(Int)
    /// The first index must be 0 or 1.
    case invalidFirstIndex(Int)
    /// The last index must not be before the first.
    case invalidMaxIndex(Int)
    /// The template has no `$index$`.
    case missingPlaceholder(String)
    /// The single-URL form needs a number after the last underscore of the file name.
    case cannotDeriveMaxIndex(String)

    /// A human-readable explanation.
    public var description: String {
        switch self {
        case .invalidGrid(let c, let r):
            "the grid must have 1 to \(GridThumbnail.maximumSide) columns and rows (got \(c)x\(r))"
        case .tooManyCells(let c, let r, let s):
            "\(s) sheets of \(c)x\(r) cells are more than \(GridThumbnail.maximumCells) cells"
        case .invalidDuration(let d):
            "durationMs must be greater than zero and at most \(GridThumbnail.maximumCellMilliseconds) (got \(d))"
        case .invalidFirstIndex(let i): "firstIndex must be 0 or 1 (got \(i))"
        case .invalidMaxIndex(let i): "maxIndex \(i) is before the first sheet"
        case .missingPlaceholder(let t): "the template '\(t)' has no $index$ placeholder"
        case .cannotDeriveMaxIndex(let t):
            "cannot derive maxIndex from '\(t)': the file name needs a number after its last underscore (…/$index$_7.jpg)"
        }
    }
}
