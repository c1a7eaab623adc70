import FilmstripFormats
import Foundation
import Testing

@Suite("WebVTT thumbnail parser: image references")
struct ImageReferenceTests {
    func image(_ reference: String, track: URL = remoteTrack) throws -> URL {
        let parsed = try parse("WEBVTT\n\n00:01.000 --> 00:02.000\n\(reference)\n", url: track)
        return try #require(parsed.images.first)
    }

    @Test(
        "relative references resolve against the track URL (RFC 3986)",
        arguments: [
            ("sprite.jpg", "https://cdn.example.com/movies/one/thumbs/sprite.jpg"),
            ("./sprite.jpg", "https://cdn.example.com/movies/one/thumbs/sprite.jpg"),
            ("../images/sprite.jpg", "https://cdn.example.com/movies/one/images/sprite.jpg"),
            ("../../../up.jpg", "https://cdn.example.com/up.jpg"),
            ("/root/sprite.jpg", "https://cdn.example.com/root/sprite.jpg"),
            ("sprite.jpg?token=abc&v=2", "https://cdn.example.com/movies/one/thumbs/sprite.jpg?token=abc&v=2"),
            ("//other.example.org/s.jpg", "https://other.example.org/s.jpg"),
            ("http://plain.example.org/a/b.png", "http://plain.example.org/a/b.png"),
        ])
    func resolution(_ reference: String, _ expected: String) throws {
        #expect(try image(reference).absoluteString == expected)
    }

    @Test("the fragment is stripped before fetching; the query is kept")
    func fragmentStripped() throws {
        let url = try image("sprite.jpg?sig=1#xywh=0,0,10,10")
        #expect(url.absoluteString == "https://cdn.example.com/movies/one/thumbs/sprite.jpg?sig=1")
    }

    @Test("spaces and trailing whitespace around the reference are handled")
    func whitespace() throws {
        #expect(try image("  my sprite.jpg \t").absoluteString.hasSuffix("/thumbs/my%20sprite.jpg"))
    }

    @Test("a local track may refer to images beside it, relative to it, or by file URL")
    func localTrackReferences() throws {
        #expect(try image("sprite.jpg", track: localTrack).path == "/srv/media/thumbs/sprite.jpg")
        #expect(try image("../img/s.jpg", track: localTrack).path == "/srv/media/img/s.jpg")
        #expect(try image("file:///var/x.png", track: localTrack).path == "/var/x.png")
        #expect(try image("https://cdn.example.com/s.jpg", track: localTrack).host == "cdn.example.com")
    }

    @Test("a remote track must not reach file: URLs: strict error, lenient skip with diagnostic")
    func remoteTrackFileReference() throws {
        let text = "WEBVTT\n\n00:01.000 --> 00:02.000\nfile:///etc/passwd\n\n00:02.000 --> 00:03.000\nok.jpg\n"
        let error = try #require(parseError(text))
        #expect(error.diagnostic.kind == .localReferenceFromRemoteTrack)
        #expect(error.line == 4 && error.column == 1)
        let lenient = try parse(text, mode: .lenient)
        #expect(lenient.cues.count == 1)
        #expect(lenient.images.map(\.lastPathComponent) == ["ok.jpg"])
        #expect(lenient.diagnostics.map(\.kind) == [.localReferenceFromRemoteTrack])
    }

    @Test(
        "only http, https and file schemes are accepted",
        arguments: [
            "data:image/png;base64,AAAA", "ftp://host/a.jpg", "javascript:alert(1)",
        ])
    func unsupportedSchemes(_ reference: String) throws {
        let error = try #require(parseError("WEBVTT\n\n00:01.000 --> 00:02.000\n\(reference)\n", url: localTrack))
        #expect(error.diagnostic.kind == .invalidImageReference)
    }

    @Test("a reference with only a fragment is invalid")
    func onlyFragment() throws {
        let error = try #require(parseError("WEBVTT\n\n00:01.000 --> 00:02.000\n#xywh=0,0,1,1\n"))
        #expect(error.diagnostic.kind == .invalidImageReference)
    }

    @Test("an invalid fragment is a diagnostic and the whole image is used")
    func invalidFragment() throws {
        let track = try parse("WEBVTT\n\n00:01.000 --> 00:02.000\na.jpg#xywh=1,2,3\n")
        #expect(track.cues.count == 1)
        #expect(track.cues[0].region == nil)
        #expect(track.diagnostics.map(\.kind) == [.invalidFragment])
        #expect(track.diagnostics[0].column == 6)
    }
}

@Suite("Media fragments")
struct MediaFragmentTests {
    @Test(
        "spatial forms",
        arguments: [
            ("xywh=160,90,320,180", SpatialRegion(x: 160, y: 90, width: 320, height: 180)),
            ("xywh=pixel:1,2,3,4", SpatialRegion(x: 1, y: 2, width: 3, height: 4)),
            ("xywh=percent:25,25,50,50", SpatialRegion(unit: .percent, x: 25, y: 25, width: 50, height: 50)),
            ("10,20,30,40", SpatialRegion(x: 10, y: 20, width: 30, height: 40)),
            ("t=10&xywh=5,6,7,8", SpatialRegion(x: 5, y: 6, width: 7, height: 8)),
        ])
    func valid(_ text: String, _ expected: SpatialRegion) {
        #expect(MediaFragment.parse(text) == .region(expected))
    }

    @Test("fragments without a spatial dimension", arguments: ["", "t=10", "t=10,20&track=video", "id=x"])
    func noSpatial(_ text: String) {
        #expect(MediaFragment.parse(text) == .none)
    }

    @Test(
        "invalid spatial fragments",
        arguments: [
            "xywh=1,2,3", "xywh=-1,2,3,4", "xywh=1,2,0,4", "xywh=1,2,3,0", "xywh=em:1,2,3,4", "xywh=1,2,3,4,5",
            "xywh=1.5,2,3,4", "xywh=", "1,2,3", "1,2,3,4x", "xywh=99999999999,1,1,1", "xywh=percent:120,0,10,10",
        ])
    func invalid(_ text: String) {
        guard case .invalid = MediaFragment.parse(text) else {
            Issue.record("\(text) should be invalid")
            return
        }
    }

    @Test("regions resolve in pixels and clamp to the image")
    func resolution() {
        let image = (w: 1600, h: 900)
        #expect(
            SpatialRegion(x: 160, y: 90, width: 160, height: 90).resolved(imageWidth: image.w, imageHeight: image.h)
                == PixelRect(x: 160, y: 90, width: 160, height: 90))
        // Overflow is clamped.
        #expect(
            SpatialRegion(x: 1500, y: 850, width: 160, height: 90).resolved(imageWidth: image.w, imageHeight: image.h)
                == PixelRect(x: 1500, y: 850, width: 100, height: 50))
        // Entirely outside: nothing to show.
        #expect(
            SpatialRegion(x: 1600, y: 0, width: 10, height: 10).resolved(imageWidth: image.w, imageHeight: image.h)
                == nil)
        // Percent is relative to the image size; adjacent halves tile without a gap.
        let left = SpatialRegion(unit: .percent, x: 0, y: 0, width: 50, height: 100).resolved(
            imageWidth: 333, imageHeight: 100)
        let right = SpatialRegion(unit: .percent, x: 50, y: 0, width: 50, height: 100).resolved(
            imageWidth: 333, imageHeight: 100)
        #expect(left == PixelRect(x: 0, y: 0, width: 167, height: 100))
        #expect(right == PixelRect(x: 166, y: 0, width: 167, height: 100))
        #expect(
            SpatialRegion(unit: .percent, x: 50, y: 50, width: 80, height: 80).resolved(
                imageWidth: 200, imageHeight: 100)
                == PixelRect(x: 100, y: 50, width: 100, height: 50))
    }
}
