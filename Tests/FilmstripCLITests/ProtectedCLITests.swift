import FilmstripImaging
import FilmstripTesting
import Foundation
import Testing

/// `frame` and `generate` with `--key` on streams Shaka Packager encrypted (cenc and cbcs, HLS and DASH).
@Suite("Command line: protected streams")
struct ProtectedCLITests {
    static let key = "\(ProtectedStreams.keyID):\(ProtectedStreams.key)"

    @Test(
        "frame --key gives the clear source's picture; without it, exit 2 naming the key id",
        arguments: [
            ProtectedStreams.Layout.cencHLS, .cbcsDASH,
        ])
    func frame(_ layout: ProtectedStreams.Layout) async throws {
        let directory = try TemporaryDirectory(prefix: "filmstrip-cli-protected")
        defer { directory.remove() }
        let stream = try ProtectedStreams.url(layout).path
        let image = directory.file("f.png").path
        let result = try await filmstrip("frame", stream, "--at", "3.3", "--exact", "--key", Self.key, "-o", image)
        #expect(result.status == 0, "\(result.stderr)")
        let (picture, _) = try ImageCodec.decode(try Data(contentsOf: URL(fileURLWithPath: image)))
        let (r, g, b) = picture.meanColor(
            x: picture.width / 4, y: picture.height / 4, width: picture.width / 2, height: picture.height / 2)
        #expect(MediaFixtures.frameNumber(r: r, g: g, b: b) == 82)
        let refused = try await filmstrip("frame", stream, "--at", "3.3", "-o", image)
        #expect(refused.status == 2 && refused.stderr.contains(ProtectedStreams.keyID), "\(refused.stderr)")
        let wrong = try await filmstrip(
            "frame", stream, "--at", "3.3", "--key", "\(ProtectedStreams.keyID):\(String(repeating: "7", count: 32))",
            "-o", image)
        #expect(wrong.status == 2 && wrong.stderr.contains("does not decrypt"), "\(wrong.stderr)")
        // The key from a ClearKey licence server; a refused licence is exit 2 naming the status.
        let server = try LoopbackServer()
        defer { server.stop() }
        ClearKeyServer.serve(on: server, keys: [ProtectedStreams.keyID: ProtectedStreams.key])
        let licensed = try await filmstrip(
            "frame", stream, "--at", "3.3", "--license-url", server.url("/license").absoluteString, "-o", image)
        #expect(licensed.status == 0, "\(licensed.stderr)")
        server.fail("/license", with: [.status(403)])
        let forbidden = try await filmstrip(
            "frame", stream, "--at", "3.3", "--license-url", server.url("/license").absoluteString, "-o", image)
        #expect(forbidden.status == 2 && forbidden.stderr.contains("HTTP 403"), "\(forbidden.stderr)")
        let malformed = try await filmstrip("frame", stream, "--at", "3.3", "--key", "00:11", "-o", image)
        #expect(malformed.status != 0 && malformed.stderr.contains("KID:KEY"), "\(malformed.stderr)")
    }

    @Test(
        "generate --key makes the same previews as from the clear source",
        arguments: [
            ProtectedStreams.Layout.cbcsHLS, .cencDASH,
        ])
    func generate(_ layout: ProtectedStreams.Layout) async throws {
        let directory = try TemporaryDirectory(prefix: "filmstrip-cli-protected")
        defer { directory.remove() }
        var sheets: [PixelBuffer] = []
        for (name, source, keys) in [
            ("clear", try ProtectedStreams.source().path, [String]()),
            ("protected", try ProtectedStreams.url(layout).path, ["--key", Self.key]),
        ] {
            let output = directory.file(name).path
            let result = try await filmstripArguments(
                ["generate", source, "--output", output, "--interval", "2", "--width", "80", "--mode", "accurate"]
                    + keys)
            #expect(result.status == 0, "\(name): \(result.stderr)")
            let (sheet, _) = try ImageCodec.decode(
                try Data(contentsOf: URL(fileURLWithPath: output).appendingPathComponent("sprite-1.jpg")))
            sheets.append(sheet)
        }
        let psnr = sheets[0].psnr(against: sheets[1]) ?? 0
        #expect(psnr >= 40, "\(psnr) dB")
        let refused = try await filmstrip(
            "generate", try ProtectedStreams.url(layout).path, "--output", directory.file("refused").path)
        #expect(refused.status == 2 && refused.stderr.contains(ProtectedStreams.keyID), "\(refused.stderr)")
    }
}
