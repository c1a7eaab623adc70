import Filmstrip
import FilmstripTesting
import Foundation
import Testing

/// A loopback server holding a sprite track: `count` one-second cues on sheets of `columns x rows` cells of
/// 32x18 pixels; cell colours identify the cell (see `SpriteSheetFixture`).
struct SpriteServer {
    let server: LoopbackServer
    let cache: TemporaryDirectory
    let count: Int
    let columns: Int
    let rows: Int
    let format: ImageFormat
    static let cellWidth = 32
    static let cellHeight = 18

    init(
        count: Int = 60, columns: Int = 5, rows: Int = 4, format: ImageFormat = .jpeg, path: String = "/media/thumbs"
    )
        throws
    {
        server = try LoopbackServer()
        cache = try TemporaryDirectory()
        self.count = count
        self.columns = columns
        self.rows = rows
        self.format = format
        let perSheet = columns * rows
        let sheets = (count + perSheet - 1) / perSheet
        for sheet in 1...sheets {
            let bytes = try SpriteSheetFixture.encoded(
                columns: columns, rows: rows, cellWidth: Self.cellWidth, cellHeight: Self.cellHeight,
                format: format, quality: 95)
            server.serve("\(path)/sprite-\(sheet).\(format.fileExtension)", body: bytes, contentType: format.mimeType)
        }
        let text = TrackFixture.sprites(
            count: count, columns: columns, rows: rows, cellWidth: Self.cellWidth, cellHeight: Self.cellHeight,
            sheetName: { "sprite-\($0).\(format.fileExtension)" })
        server.serve("\(path)/track.vtt", text: text)
    }

    var trackURL: URL { server.url("/media/thumbs/track.vtt") }

    func configuration(_ mode: ThumbnailsConfiguration.LoadingMode = .eager) -> ThumbnailsConfiguration {
        var configuration = ThumbnailsConfiguration()
        configuration.cacheDirectory = cache.url
        configuration.loadingMode = mode
        configuration.loading = LoadingConfiguration(
            requestTimeout: 5, resourceTimeout: 10, retry: RetryPolicy(maximumAttempts: 2, baseDelay: 0.01))
        return configuration
    }

    func sheetPath(_ n: Int) -> String { "/media/thumbs/sprite-\(n).\(format.fileExtension)" }
}

/// Decodes a thumbnail and returns the cell its colour identifies.
func cellShown(by thumbnail: Thumbnail) throws -> Int? {
    let (pixels, _) = try ImageCodec.decode(thumbnail.imageData)
    let mean = pixels.meanColor(x: 4, y: 4, width: pixels.width - 8, height: pixels.height - 8)
    return SpriteSheetFixture.cell(matching: mean)
}

func thumbnailsError(_ body: () async throws -> Void) async -> ThumbnailsError? {
    do {
        try await body()
        return nil
    } catch let error as ThumbnailsError {
        return error
    } catch {
        Issue.record("unexpected error type: \(type(of: error)) \(error)")
        return nil
    }
}
