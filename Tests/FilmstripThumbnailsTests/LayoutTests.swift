import Filmstrip
import FilmstripTesting
import Foundation
import Testing

@Suite("Layout: where every thumbnail sits, for pages that crop sheets themselves")
struct LayoutTests {
    @Test("pixel, percent and whole-image cues resolve to pixels; the rectangles crop the cells they name")
    func regions() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let sheet = try SpriteSheetFixture.encoded(columns: 4, rows: 2, cellWidth: 40, cellHeight: 30)
        try directory.write("sheet.jpg", sheet)
        try directory.write(
            "whole.jpg", try SpriteSheetFixture.encoded(columns: 1, rows: 1, cellWidth: 20, cellHeight: 10))
        let track = try directory.write(
            "track.vtt",
            text: """
                WEBVTT

                00:00.000 --> 00:02.000
                sheet.jpg#xywh=40,0,40,30

                00:02.000 --> 00:04.000
                sheet.jpg#xywh=percent:75,50,25,50

                00:04.000 --> 00:06.000
                whole.jpg

                """)
        var configuration = ThumbnailsConfiguration()
        configuration.cacheDirectory = nil
        let thumbnails = TrackThumbnails(configuration: configuration)
        await #expect(throws: ThumbnailsError.self) { try await thumbnails.layout() }
        try await thumbnails.load(track: track)
        let layout = try await thumbnails.layout()
        #expect(layout.map(\.start) == [0, 2, 4])
        #expect(layout.map(\.end) == [2, 4, 6])
        #expect(layout.map(\.image) == [0, 0, 1])
        #expect(layout[0].region == PixelRect(x: 40, y: 0, width: 40, height: 30))
        #expect(layout[1].region == PixelRect(x: 120, y: 30, width: 40, height: 30))
        #expect(layout[2].region == nil)
        // The rectangles cut the named cells out of the image bytes handed over.
        let (pixels, _) = try ImageCodec.decode(try await thumbnails.imageData(at: 0))
        for (placement, cell) in zip(layout.prefix(2), [1, 7]) {
            let r = try #require(placement.region)
            let mean = pixels.meanColor(x: r.x + 4, y: r.y + 4, width: r.width - 8, height: r.height - 8)
            #expect(SpriteSheetFixture.cell(matching: mean) == cell)
        }
        #expect(
            try await thumbnails.imageData(at: 1)
                == Data(
                    try SpriteSheetFixture.encoded(
                        columns: 1, rows: 1, cellWidth: 20, cellHeight: 10)))
        await #expect(throws: ThumbnailsError.self) { try await thumbnails.imageData(at: 2) }
    }
}
