import Filmstrip
import FilmstripMedia
import FilmstripTesting
import Foundation
import Testing

/// The counter-video frame number an image shows.
func frameNumber(_ image: PixelBuffer) -> Int? {
    let (r, g, b) = image.meanColor(
        x: image.width / 4, y: image.height / 4, width: max(1, image.width / 2), height: max(1, image.height / 2))
    return MediaFixtures.frameNumber(r: r, g: g, b: b)
}

func mediaError(_ body: () async throws -> Void) async -> MediaError? {
    do {
        try await body()
        return nil
    } catch let error as MediaError {
        return error
    } catch {
        Issue.record("unexpected error: \(type(of: error)) \(error)")
        return nil
    }
}

/// Serves every file of a directory (recursively) under `prefix`.
func serve(_ directory: URL, on server: LoopbackServer, prefix: String) throws {
    let enumerator = FileManager.default.enumerator(at: directory, includingPropertiesForKeys: nil)
    while let file = enumerator?.nextObject() as? URL {
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: file.path, isDirectory: &isDirectory), !isDirectory.boolValue
        else { continue }
        let relative = String(file.standardizedFileURL.path.dropFirst(directory.standardizedFileURL.path.count))
        server.serve(prefix + relative, body: Array(try Data(contentsOf: file)))
    }
}
