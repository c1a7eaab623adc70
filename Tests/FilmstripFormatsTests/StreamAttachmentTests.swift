import FilmstripFormats
import Foundation
import Testing

/// A stream's own manifest with generated image tracks added (`generate --attach`): every other reference rewritten
/// to resolve from the output directory, the tracks placed in every Period, the rest kept byte for byte.
@Suite("Attaching image tracks to a stream's manifest")
struct StreamAttachmentTests {
    /// 15 thumbnails of 2 s on sheets of 5x2 (two sheets of 20 s, the second half filled), 160x90 tiles.
    static let layout = PreviewTrackLayout(
        duration: 30, starts: (0..<15).map { Int64($0) * 2000 }, ends: (1...15).map { Int64($0) * 2000 },
        tileWidth: 160, tileHeight: 90, columns: 5, rows: 2, sheetNames: ["sprite-1.jpg", "sprite-2.jpg"],
        sheetRows: [2, 2])
    static let output = URL(fileURLWithPath: "/data/out", isDirectory: true)
    static let image = StreamAttachment.ImageStream(
        line: PreviewTrackWriter.imageStreamInf(layout, uri: "thumbnails.m3u8", sheetBytes: [4000, 2000]))
    static let representation = DASHImageRepresentation(
        layout: layout, mediaTemplate: "sprite-$Number$.jpg", sheetBytes: [4000, 2000])

    static func master(_ text: String, at url: URL) throws -> String {
        try StreamAttachment.hlsMaster(
            text, url: url, directory: output, imageStreams: [image],
            wrapping: .init(bandwidth: 1_000_000, resolution: PixelSize(width: 640, height: 360), codecs: "avc1.64001f")
        )
    }

    @Test("an HLS master: every URI resolves from the output directory, attribute lists kept whole")
    func hlsMaster() throws {
        let text = """
            #EXTM3U
            #EXT-X-VERSION:7
            #EXT-X-MEDIA:TYPE=AUDIO,GROUP-ID="aud",NAME="a, URI=x",DEFAULT=YES,URI="audio/en.m3u8"
            #EXT-X-STREAM-INF:BANDWIDTH=800000,RESOLUTION=640x360,AUDIO="aud"
            video/360.m3u8?token=1
            #EXT-X-STREAM-INF:BANDWIDTH=2000000,RESOLUTION=1280x720,AUDIO="aud"
            https://cdn.example.com/v/720.m3u8
            #EXT-X-I-FRAME-STREAM-INF:BANDWIDTH=90000,URI="video/iframes.m3u8"
            #EXT-X-IMAGE-STREAM-INF:BANDWIDTH=9000,RESOLUTION=320x180,CODECS="jpeg",URI="/abs/images.m3u8"
            #EXT-X-SESSION-DATA:DATA-ID="com.example",URI="meta.json"
            #EXT-X-CONTENT-STEERING:SERVER-URI="steer.json",PATHWAY-ID="A"

            """
        let local = try Self.master(text, at: URL(fileURLWithPath: "/data/stream/master.m3u8"))
        let lines = local.split(separator: "\n").map(String.init)
        #expect(
            lines.contains(
                #"#EXT-X-MEDIA:TYPE=AUDIO,GROUP-ID="aud",NAME="a, URI=x",DEFAULT=YES,URI="../stream/audio/en.m3u8""#))
        #expect(lines.contains("../stream/video/360.m3u8?token=1"))
        #expect(lines.contains("https://cdn.example.com/v/720.m3u8"))
        #expect(lines.contains(#"#EXT-X-I-FRAME-STREAM-INF:BANDWIDTH=90000,URI="../stream/video/iframes.m3u8""#))
        // The stream's own image track is kept beside ours; a root-relative path means the same from anywhere here.
        #expect(
            lines.contains(
                #"#EXT-X-IMAGE-STREAM-INF:BANDWIDTH=9000,RESOLUTION=320x180,CODECS="jpeg",URI="/abs/images.m3u8""#))
        #expect(lines.contains(#"#EXT-X-SESSION-DATA:DATA-ID="com.example",URI="../stream/meta.json""#))
        #expect(lines.contains(#"#EXT-X-CONTENT-STEERING:SERVER-URI="../stream/steer.json",PATHWAY-ID="A""#))
        #expect(lines.last == Self.image.line)
        #expect(lines.first == "#EXTM3U" && lines[1] == "#EXT-X-VERSION:7")

        let remote = try Self.master(text, at: URL(string: "https://origin.example.com/show/master.m3u8")!)
        #expect(remote.contains("\nhttps://origin.example.com/show/video/360.m3u8?token=1\n"))
        #expect(remote.contains(#"URI="https://origin.example.com/abs/images.m3u8""#))
        #expect(remote.contains(#"URI="https://origin.example.com/show/audio/en.m3u8""#))

        // A master in the output directory itself needs no change.
        let here = try Self.master(text, at: Self.output.appendingPathComponent("source.m3u8"))
        #expect(here.contains("\nvideo/360.m3u8?token=1\n"))
        // The result is a master Filmstrip reads, with both image streams.
        guard case .master(let parsed) = try HLSPlaylistParser().parse(Data(local.utf8), url: Self.output) else {
            Issue.record("not a master")
            return
        }
        #expect(parsed.imageStreams.count == 2)
        #expect(parsed.variants.first?.uri.path == "/data/stream/video/360.m3u8")
    }

    @Test("a media playlist is wrapped in a master with one variant")
    func mediaPlaylist() throws {
        let text = "#EXTM3U\n#EXT-X-TARGETDURATION:2\n#EXTINF:2,\ns0.ts\n#EXT-X-ENDLIST\n"
        let wrapped = try Self.master(text, at: URL(fileURLWithPath: "/data/hls/index.m3u8"))
        #expect(
            wrapped == """
                #EXTM3U
                #EXT-X-STREAM-INF:BANDWIDTH=1000000,RESOLUTION=640x360,CODECS="avc1.64001f"
                ../hls/index.m3u8
                \(Self.image.line)

                """)
        #expect(throws: StreamAttachment.Failure.self) {
            try StreamAttachment.hlsMaster(
                "not a playlist", url: Self.output, directory: Self.output, imageStreams: [], wrapping: nil)
        }
    }

    static let mpd = """
        <?xml version="1.0"?>
        <MPD xmlns="urn:mpeg:dash:schema:mpd:2011" type="static" mediaPresentationDuration="PT30S">
        \t<BaseURL>media/</BaseURL>
        \t<Period id="a" duration="PT20S">
        \t\t<AdaptationSet id="1000" contentType="video" mimeType="video/mp4">
        \t\t\t<Role schemeIdUri="urn:mpeg:dash:role:2011" value="main"/>
        \t\t\t<SegmentTemplate media="v$Number$.m4s" initialization="v-init.mp4" duration="2" startNumber="1"/>
        \t\t\t<Representation id="v" bandwidth="800000" width="640" height="360"/>
        \t\t</AdaptationSet>
        \t</Period>
        \t<Period id="b" duration="PT10S">
        \t\t<BaseURL>part2/</BaseURL>
        \t\t<AdaptationSet id="1" contentType="video" mimeType="video/mp4">
        \t\t\t<BaseURL serviceLocation="cdn">video/</BaseURL>
        \t\t\t<SegmentTemplate media="v$Number$.m4s" initialization="v-init.mp4" duration="2" startNumber="1"/>
        \t\t\t<Representation id="v" bandwidth="800000" width="640" height="360"/>
        \t\t</AdaptationSet>
        \t\t<AdaptationSet id="9" contentType="image" mimeType="image/jpeg">
        \t\t\t<SegmentTemplate media="theirs-$Number$.jpg" duration="10" startNumber="1"/>
        \t\t\t<Representation id="theirs" bandwidth="1000" width="320" height="180">
        \t\t\t\t<EssentialProperty schemeIdUri="http://dashif.org/thumbnail_tile" value="1x1"/>
        \t\t\t</Representation>
        \t\t</AdaptationSet>
        \t</Period>
        </MPD>

        """

    @Test("an MPD: upper BaseURLs folded into each set's, our set in every Period, the rest byte for byte")
    func mpdAttached() throws {
        let url = URL(fileURLWithPath: "/data/stream/manifest.mpd")
        let text = try StreamAttachment.mpd(
            Data(Self.mpd.utf8), url: url, directory: Self.output, representations: [Self.representation])
        // The MPD's and the Period's BaseURLs are gone; each set has the resolved base, relative to the output.
        #expect(!text.contains("<BaseURL>media/</BaseURL>") && !text.contains("<BaseURL>part2/</BaseURL>"))
        // Where the schema puts it: after Role, before the segment information.
        #expect(text.contains("value=\"main\"/>\n\t\t\t<BaseURL>../stream/media/</BaseURL>\n\t\t\t<SegmentTemplate "))
        #expect(text.contains(#"<BaseURL serviceLocation="cdn">../stream/media/part2/video/</BaseURL>"#))
        #expect(text.contains(#"<SegmentTemplate media="v$Number$.m4s" initialization="v-init.mp4" duration="2""#))
        // Our set in each Period, indented with the document's tabs; the first Period's id 1000 is taken.
        #expect(text.contains("\t\t<AdaptationSet id=\"1001\" contentType=\"image\" mimeType=\"image/jpeg\">\n"))
        #expect(text.contains("\t\t<AdaptationSet id=\"1000\" contentType=\"image\" mimeType=\"image/jpeg\">\n"))
        #expect(
            text.contains("\t\t\t<Representation id=\"thumbnails\" bandwidth=\"1600\" width=\"800\" height=\"180\">"))
        #expect(
            text.contains("\t\t\t\t<EssentialProperty schemeIdUri=\"http://dashif.org/thumbnail_tile\" value=\"5x2\"/>")
        )
        // The second Period starts at 20 s, on a sheet boundary: a @duration template from sheet 2.
        #expect(
            text.contains(
                #"<SegmentTemplate media="sprite-$Number$.jpg" timescale="1000" duration="20000" startNumber="2"/>"#))
        #expect(text.contains("theirs-$Number$.jpg"), "the stream's own image set is kept")

        // Filmstrip reads the result: every segment where the source has it, and our sheets from the output.
        let presentation = try DASHManifestParser().parse(
            Data(text.utf8), url: Self.output.appendingPathComponent("m.mpd"))
        #expect(presentation.periods.map(\.start) == [0, 20])
        let images = presentation.periods.map { $0.tracks.filter { $0.kind == .image } }
        #expect(images.map(\.count) == [1, 2])
        guard case .list(let video)? = presentation.periods[1].tracks.first?.renditions.first?.segments,
            case .list(let sheets)? = images[1].first(where: { $0.id == "1000" })?.renditions.first?.segments
        else {
            Issue.record("no segments")
            return
        }
        #expect(video.first?.url.path == "/data/stream/media/part2/video/v1.m4s")
        #expect(sheets.first?.url.path == "/data/out/sprite-2.jpg" && sheets.first?.start == 20)
    }

    @Test("a Period that starts inside a sheet gets a SegmentTimeline from that sheet")
    func periodInsideASheet() throws {
        let text = """
            <MPD xmlns="urn:mpeg:dash:schema:mpd:2011" type="static" mediaPresentationDuration="PT30S">
              <Period id="a" duration="PT14S">
                <AdaptationSet contentType="video" mimeType="video/mp4">
                  <SegmentTemplate media="a$Number$.m4s" duration="2" startNumber="1"/>
                  <Representation id="v" bandwidth="800000" width="640" height="360"/>
                </AdaptationSet>
              </Period>
              <Period id="b" duration="PT16S">
                <AdaptationSet contentType="video" mimeType="video/mp4">
                  <SegmentTemplate media="b$Number$.m4s" duration="2" startNumber="1"/>
                  <Representation id="v" bandwidth="800000" width="640" height="360"/>
                </AdaptationSet>
              </Period>
            </MPD>
            """
        let attached = try StreamAttachment.mpd(
            Data(text.utf8), url: Self.output.appendingPathComponent("source.mpd"), directory: Self.output,
            representations: [Self.representation])
        #expect(attached.contains(#"duration="20000" startNumber="1"/>"#))
        #expect(attached.contains(#"presentationTimeOffset="14000" startNumber="1">"#))
        #expect(attached.contains(#"<SegmentTimeline><S t="0" d="20000" r="1"/></SegmentTimeline>"#))
        // No BaseURL above and the MPD in the output directory: the stream's sets are untouched.
        #expect(!attached.contains("<BaseURL>"))
    }

    @Test("a remote MPD's sets get absolute bases; a prefixed namespace prefixes our elements")
    func remoteAndPrefixed() throws {
        let text = """
            <mpd:MPD xmlns:mpd="urn:mpeg:dash:schema:mpd:2011" type="static" mediaPresentationDuration="PT30S">
              <mpd:Period>
                <mpd:AdaptationSet contentType="video" mimeType="video/mp4">
                  <mpd:SegmentTemplate media="v$Number$.m4s" duration="2" startNumber="1"/>
                  <mpd:Representation id="v" bandwidth="800000" width="640" height="360"/>
                </mpd:AdaptationSet>
              </mpd:Period>
            </mpd:MPD>
            """
        let attached = try StreamAttachment.mpd(
            Data(text.utf8), url: URL(string: "https://origin.example.com/a/b.mpd")!, directory: Self.output,
            representations: [Self.representation])
        #expect(attached.contains("<mpd:BaseURL>https://origin.example.com/a/</mpd:BaseURL>"))
        #expect(attached.contains(#"<mpd:AdaptationSet id="1000" contentType="image""#))
        #expect(attached.contains("</mpd:Representation>\n    </mpd:AdaptationSet>"))
        let presentation = try DASHManifestParser().parse(Data(attached.utf8), url: Self.output)
        #expect(presentation.periods[0].tracks.map(\.kind) == [.video, .image])
    }

    @Test("a dynamic MPD and an unreadable one are refused")
    func refused() throws {
        let live = """
            <MPD xmlns="urn:mpeg:dash:schema:mpd:2011" type="dynamic" availabilityStartTime="2026-01-01T00:00:00Z">
              <Period start="PT0S"><AdaptationSet contentType="video" mimeType="video/mp4">
                <SegmentTemplate media="v$Number$.m4s" duration="2"/><Representation id="v" bandwidth="1"/>
              </AdaptationSet></Period>
            </MPD>
            """
        for (bytes, expected) in [(live, "dynamic"), ("<MPD", "cannot be read")] {
            let error = #expect(throws: StreamAttachment.Failure.self) {
                try StreamAttachment.mpd(
                    Data(bytes.utf8), url: Self.output, directory: Self.output, representations: [Self.representation])
            }
            #expect(error?.message.contains(expected) == true, "\(String(describing: error))")
        }
    }
}
