import Filmstrip
import FilmstripTesting
import Foundation

/// A three-hour track: 10,800 one-second thumbnails of 160x90 on 108 sprite sheets of 1600x900 (10x10), JPEG q80.
struct BenchFixture {
    static let cueCount = 10_800
    static let sheetCount = 108

    let directory: TemporaryDirectory
    let trackText: String
    let trackFile: URL
    let sheets: [[UInt8]]

    init(directory: TemporaryDirectory) throws {
        self.directory = directory
        trackText = TrackFixture.sprites(count: Self.cueCount, sheetName: { "sheets/sprite-\($0).jpg" })
        trackFile = try directory.write("thumbnails.vtt", text: trackText)
        // Textured cells give JPEGs the size of real picture sprites (a flat colour would compress to nothing).
        let pixels = SpriteSheetFixture.pixels(columns: 10, rows: 10, cellWidth: 160, cellHeight: 90, texture: 60)
        let base = try ImageCodec.encode(pixels, as: .jpeg, quality: 80)
        // Distinct bytes per sheet (a comment segment after SOI) so no layer can share work between sheets.
        sheets = (1...Self.sheetCount).map { n in
            let comment = Array("sheet \(n)".utf8)
            let length = comment.count + 2
            return [0xFF, 0xD8, 0xFF, 0xFE, UInt8(length >> 8), UInt8(length & 0xFF)] + comment + base.dropFirst(2)
        }
        for (i, sheet) in sheets.enumerated() { try directory.write("sheets/sprite-\(i + 1).jpg", sheet) }
    }

    var sheetBytes: Int { sheets.reduce(0) { $0 + $1.count } }
}
