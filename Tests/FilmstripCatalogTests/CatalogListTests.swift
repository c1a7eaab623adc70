import FilmstripCatalog
import FilmstripMedia
import FilmstripTesting
import Foundation
import Testing

@Suite("Catalog lists")
struct CatalogListTests {
    @Test("a list file: comments, blank lines and repeats skipped; paths relative to the list; URLs kept")
    func listFile() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let text = """
            # the catalog
            shows/ep1.mp4

              shows/ep2.mp4  \r
            /absolute/movie.mov
            https://cdn.example.com/v/trailer.mp4
            file:///srv/film.mkv
            shows/ep1.mp4
            #shows/ep3.mp4
            """
        let list = try directory.write("videos.txt", Array(text.utf8))
        let items = try CatalogList.read(list)
        #expect(
            items.map(\.input) == [
                "shows/ep1.mp4", "shows/ep2.mp4", "/absolute/movie.mov", "https://cdn.example.com/v/trailer.mp4",
                "file:///srv/film.mkv",
            ])
        #expect(items[0].url == directory.url.appendingPathComponent("shows/ep1.mp4").standardizedFileURL)
        #expect(items[2].url.path == "/absolute/movie.mov")
        #expect(items[3].url.absoluteString == "https://cdn.example.com/v/trailer.mp4")
        #expect(items[4].url.isFileURL && items[4].url.path == "/srv/film.mkv")
    }

    @Test("a line that is neither a path nor an http(s) or file URL is an error naming its line")
    func badLines() throws {
        let base = URL(fileURLWithPath: "/lists")
        // A colon does not make a URL: "ep:1.mp4" is a file.
        #expect(try CatalogList.parse("ep:1.mp4\n", relativeTo: base).first?.url.path == "/lists/ep:1.mp4")
        for (text, line) in [("a.mp4\nftp://host/b.mp4\n", 2), ("# x\n\ndata:video/mp4;base64,AAAA\n", 3)] {
            #expect {
                try CatalogList.parse(text, relativeTo: base)
            } throws: { error in
                let error = error as? CatalogError
                return error?.kind == .invalidList && error?.line == line
            }
        }
        #expect(throws: CatalogError.self) { try CatalogList.read(URL(fileURLWithPath: "/no/such/list.txt")) }
        let binary = try TemporaryDirectory()
        defer { binary.remove() }
        #expect(throws: CatalogError.self) { try CatalogList.read(try binary.write("list.txt", [0xFF, 0xFE, 0x00])) }
    }

    @Test(
        "a folder lists every video under it by relative path; hidden files and an HLS stream's segments are not videos"
    )
    func folder() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        for name in ["a.mp4", "shows/b.mkv", "shows/.hidden.mp4", ".cache/c.mp4", "notes.txt"] {
            let url = directory.file(name)
            try FileManager.default.createDirectory(
                at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
            try Data([0]).write(to: url)
        }
        let stream = directory.file("stream/index.m3u8")
        try FileManager.default.createDirectory(
            at: stream.deletingLastPathComponent(), withIntermediateDirectories: true)
        try Data("#EXTM3U\n#EXTINF:2,\nseg-0.ts\n#EXTINF:2,\nseg-1.ts\n#EXT-X-ENDLIST\n".utf8).write(to: stream)
        for name in ["seg-0.ts", "seg-1.ts", "other.ts"] {
            try Data([0]).write(to: directory.file("stream/" + name))
        }
        // A master beside its variant, whose segments lie in a folder below; a single-file stream by byte ranges.
        let master = directory.file("show/master.m3u8")
        try FileManager.default.createDirectory(
            at: directory.file("show/v0/segs"), withIntermediateDirectories: true)
        try Data("#EXTM3U\n#EXT-X-STREAM-INF:BANDWIDTH=1\nv0/index.m3u8\n".utf8).write(to: master)
        try Data("#EXTM3U\n#EXT-X-MAP:URI=\"segs/init.mp4\"\n#EXTINF:2,\nsegs/s0.m4s\n".utf8)
            .write(to: directory.file("show/v0/index.m3u8"))
        for name in ["init.mp4", "s0.m4s"] { try Data([0]).write(to: directory.file("show/v0/segs/" + name)) }
        try Data("#EXTM3U\n#EXT-X-BYTERANGE:100@0\n#EXTINF:2,\nall.ts\n".utf8).write(to: directory.file("one.m3u8"))
        try Data([0]).write(to: directory.file("all.ts"))
        // An MPD that does not parse still counts as a stream (opening it says why).
        try Data("<MPD/>".utf8).write(to: directory.file("dash.mpd"))
        // A DASH stream in single-file mode (as ffmpeg's `-single_file 1` writes it): its Representations' files
        // belong to it, by BaseURL, by SegmentList/initialization names and by a static template's segments.
        try FileManager.default.createDirectory(at: directory.file("od"), withIntermediateDirectories: true)
        try Data(
            """
            <MPD xmlns="urn:mpeg:dash:schema:mpd:2011" type="static" mediaPresentationDuration="PT2S" minBufferTime="PT2S">
            <Period><AdaptationSet mimeType="video/mp4">
            <Representation id="0" bandwidth="1"><BaseURL>od-stream0.mp4</BaseURL>
            <SegmentBase indexRange="10-19"><Initialization range="0-9"/></SegmentBase></Representation>
            <Representation id="1" bandwidth="1"><SegmentList timescale="1" duration="2">
            <Initialization sourceURL="od-init1.mp4"/><SegmentURL media="od-stream1.mp4" mediaRange="0-9"/></SegmentList>
            </Representation>
            <Representation id="2" bandwidth="1"><SegmentTemplate media="chunk-$Number$.mp4" timescale="1" duration="2"/>
            </Representation></AdaptationSet></Period></MPD>
            """.utf8
        ).write(to: directory.file("od/manifest.mpd"))
        for name in ["od-stream0.mp4", "od-init1.mp4", "od-stream1.mp4", "chunk-1.mp4", "chunk-2.mp4"] {
            try Data([0]).write(to: directory.file("od/" + name))
        }
        let items = try CatalogList.read(directory.url)
        #expect(
            items.map(\.input) == [
                "a.mp4", "dash.mpd", "od/chunk-2.mp4", "od/manifest.mpd", "one.m3u8", "show/master.m3u8",
                "shows/b.mkv", "stream/index.m3u8", "stream/other.ts",
            ])
        #expect(items[6].url == directory.file("shows/b.mkv").standardizedFileURL)
        // Without streams (serve's library), the single-file stream's media is the video.
        #expect(VideoFolder.videos(under: directory.url).map(\.lastPathComponent).contains("all.ts"))
    }
}
