import FilmstripFormats
import Foundation
import Testing

@Suite("Grid thumbnails")
struct GridThumbnailTests {
    let base = URL(string: "https://cdn.example.com/media/thumbs")!

    @Test("single-URL form derives maxIndex from the number after the last underscore")
    func singleURL() throws {
        let grid = try GridThumbnail(
            baseUrl: URL(string: "https://cdn.example.com/media/thumbs/$index$_7.jpg")!, gridHeight: 10,
            gridWidth: 10, durationMs: 10_000)
        #expect(grid.maxIndex == 7)
        #expect(grid.sheetURL(index: 1)?.absoluteString == "https://cdn.example.com/media/thumbs/1_7.jpg")
        #expect(grid.sheetURLs.count == 7)
        #expect(grid.sheetURLs.last?.lastPathComponent == "7_7.jpg")
        #expect(GridThumbnail.maxIndex(fromTemplate: "https://x/a_b/$index$_12.png") == 12)
    }

    @Test("explicit template form")
    func explicitTemplate() throws {
        let grid = try GridThumbnail(
            baseUrl: base, pathTemplate: "$index$_7.jpg", gridHeight: 10, gridWidth: 10, durationMs: 10_000, maxIndex: 7
        )
        #expect(grid.sheetURL(index: 3)?.absoluteString == "https://cdn.example.com/media/thumbs/3_7.jpg")
        let nested = try GridThumbnail(
            baseUrl: URL(string: "https://cdn.example.com/media/")!, pathTemplate: "tiles/sheet-$index$.png",
            gridHeight: 2, gridWidth: 2, durationMs: 1000, maxIndex: 2)
        #expect(nested.sheetURL(index: 2)?.absoluteString == "https://cdn.example.com/media/tiles/sheet-2.png")
    }

    @Test("invalid definitions throw")
    func invalid() {
        #expect(throws: GridThumbnailError.self) {
            try GridThumbnail(
                baseUrl: URL(string: "https://x/$index$.jpg")!, gridHeight: 10, gridWidth: 10, durationMs: 1000)
        }
        #expect(throws: GridThumbnailError.self) {
            try GridThumbnail(
                baseUrl: base, pathTemplate: "no-placeholder.jpg", gridHeight: 1, gridWidth: 1, durationMs: 1,
                maxIndex: 1)
        }
        #expect(throws: GridThumbnailError.self) {
            try GridThumbnail(
                baseUrl: base, pathTemplate: "$index$.jpg", gridHeight: 0, gridWidth: 1, durationMs: 1, maxIndex: 1)
        }
        #expect(throws: GridThumbnailError.self) {
            try GridThumbnail(
                baseUrl: base, pathTemplate: "$index$.jpg", gridHeight: 1, gridWidth: 1, durationMs: 0, maxIndex: 1)
        }
        #expect(throws: GridThumbnailError.self) {
            try GridThumbnail(
                baseUrl: base, pathTemplate: "$index$.jpg", gridHeight: 1, gridWidth: 1, durationMs: 1, maxIndex: 0)
        }
        #expect(throws: GridThumbnailError.self) {
            try GridThumbnail(
                baseUrl: base, pathTemplate: "$index$.jpg", gridHeight: 1, gridWidth: 1, durationMs: 1, maxIndex: 3,
                firstIndex: 2)
        }
    }

    @Test("cells fill left to right, top to bottom; sheets change at the boundary")
    func arithmetic() throws {
        let grid = try GridThumbnail(
            baseUrl: base, pathTemplate: "$index$_7.jpg", gridHeight: 10, gridWidth: 10, durationMs: 10_000, maxIndex: 7
        )
        let first = try #require(grid.cell(at: 0))
        #expect((first.sheetIndex, first.column, first.row) == (1, 0, 0))
        let second = try #require(grid.cell(at: 10))
        #expect((second.sheetIndex, second.column, second.row) == (1, 1, 0))
        let justBefore = try #require(grid.cell(at: 9.999))
        #expect(justBefore.number == 0)
        let endOfRow = try #require(grid.cell(at: 95))
        #expect((endOfRow.column, endOfRow.row) == (9, 0))
        let nextRow = try #require(grid.cell(at: 100))
        #expect((nextRow.column, nextRow.row) == (0, 1))
        let lastOfSheet = try #require(grid.cell(at: 999.999))
        #expect((lastOfSheet.sheetIndex, lastOfSheet.column, lastOfSheet.row) == (1, 9, 9))
        let firstOfNext = try #require(grid.cell(at: 1000))
        #expect((firstOfNext.sheetIndex, firstOfNext.column, firstOfNext.row) == (2, 0, 0))
        let last = try #require(grid.cell(at: 6999))
        #expect((last.sheetIndex, last.column, last.row) == (7, 9, 9))
        #expect(last.startMilliseconds == 6_990_000 && last.endMilliseconds == 7_000_000)
        #expect(grid.cell(at: 7000) == nil)
        #expect(grid.cell(at: -0.001) == nil)
        #expect(grid.cell(at: .nan) == nil)
        #expect(
            last.rect(sheetWidth: 1600, sheetHeight: 900, columns: 10, rows: 10)
                == PixelRect(x: 1440, y: 810, width: 160, height: 90))
    }

    @Test("firstIndex 0 numbers sheets from zero")
    func zeroBased() throws {
        let grid = try GridThumbnail(
            baseUrl: base, pathTemplate: "s$index$.jpg", gridHeight: 2, gridWidth: 3, durationMs: 500, maxIndex: 1,
            firstIndex: 0)
        #expect(grid.sheetCount == 2 && grid.cellCount == 12)
        #expect(grid.cell(at: 2.999)?.sheetIndex == 0)
        #expect(grid.cell(at: 3.0)?.sheetIndex == 1)
        #expect(grid.sheetURLs.map(\.lastPathComponent) == ["s0.jpg", "s1.jpg"])
    }

    @Test("lookup policies on a grid")
    func policies() throws {
        let grid = try GridThumbnail(
            baseUrl: base, pathTemplate: "$index$.jpg", gridHeight: 1, gridWidth: 4, durationMs: 1000, maxIndex: 1)
        #expect(grid.cell(at: 1.5, policy: .containing)?.number == 1)
        #expect(grid.cell(at: 1.5, policy: .nextCue)?.number == 2)
        #expect(grid.cell(at: 2.0, policy: .nextCue)?.number == 2)
        #expect(grid.cell(at: 99, policy: .nextCue)?.number == 3)
        #expect(grid.cell(at: 99, policy: .nearest)?.number == 3)
        #expect(grid.cell(at: 99, policy: .containing) == nil)
        #expect(grid.cell(at: -5, policy: .nearest)?.number == 0)
    }
}
