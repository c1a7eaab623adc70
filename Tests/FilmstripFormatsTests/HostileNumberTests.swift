import FilmstripFormats
import Foundation
import Testing

/// Numbers from outside at the edges of `Int64`: each is a parse error with its line (or element), never a trap, and
/// what stays within the bounds parses. Every later sum (sequence number plus index, range start plus length, a
/// timeline's times) stays far from overflow because each outside number is held to 2^53.
@Suite("Hostile numbers")
struct HostileNumberTests {
    static let url = URL(string: "https://example.com/p.m3u8")!
    static let edges = ["9223372036854775807", "9223372036854775808", "18446744073709551615", "9007199254740993"]

    static func hls(_ text: String) -> Result<HLSPlaylist, HLSParseError> {
        Result { () throws(HLSParseError) in try HLSPlaylistParser().parse(Data(text.utf8), url: url) }
    }

    @Test("HLS sequence numbers past 2^53 are errors with their line; 2^53 itself is read", arguments: edges)
    func sequences(_ value: String) {
        for tag in ["EXT-X-MEDIA-SEQUENCE", "EXT-X-DISCONTINUITY-SEQUENCE"] {
            let text = "#EXTM3U\n#EXT-X-TARGETDURATION:2\n#\(tag):\(value)\n#EXTINF:2,\na.ts\n#EXTINF:2,\nb.ts\n"
            guard case .failure(let error) = Self.hls(text) else {
                Issue.record("\(tag):\(value) was read")
                continue
            }
            #expect(error.line == 3 && error.description.contains("2^53"), "\(error)")
        }
        let top =
            "#EXTM3U\n#EXT-X-TARGETDURATION:2\n#EXT-X-MEDIA-SEQUENCE:9007199254740992\n#EXTINF:2,\na.ts\n"
            + "#EXT-X-DISCONTINUITY\n#EXTINF:2,\nb.ts\n"
        guard case .success(.media(let media)) = Self.hls(top) else {
            Issue.record("2^53 refused")
            return
        }
        #expect(media.segments.map(\.sequenceNumber) == [9_007_199_254_740_992, 9_007_199_254_740_993])
    }

    @Test(
        "HLS byte ranges that end past 2^53, explicitly or by running on, are errors with their line",
        arguments: [
            ("#EXT-X-BYTERANGE:9223372036854775807@9223372036854775807\n#EXTINF:2,\na.ts\n", 3),
            ("#EXT-X-BYTERANGE:100@9007199254740990\n#EXTINF:2,\na.ts\n", 3),
            ("#EXT-X-BYTERANGE:9007199254740992@0\n#EXTINF:2,\na.ts\n#EXT-X-BYTERANGE:1\n#EXTINF:2,\na.ts\n", 8),
            ("#EXT-X-MAP:URI=\"i.mp4\",BYTERANGE=\"10@9223372036854775800\"\n#EXTINF:2,\na.ts\n", 3),
            ("#EXT-X-BYTERANGE:99999999999999999999999\n#EXTINF:2,\na.ts\n", 3),
        ])
    func byteRanges(_ body: String, _ line: Int) {
        let text = "#EXTM3U\n#EXT-X-TARGETDURATION:2\n" + body
        guard case .failure(let error) = Self.hls(text) else {
            Issue.record("\(body) was read")
            return
        }
        #expect(error.line == line, "\(error)")
        #expect(error.description.count < 200, "the message quotes a short excerpt: \(error)")
    }

    static func mpd(
        _ attributes: String, timeline: String = "", list: String? = nil
    ) -> Result<Presentation, DASHParseError> {
        let body =
            list
                ?? """
                <SegmentTemplate media="v$Number$.m4s" \(attributes)>\(timeline)</SegmentTemplate>
                """
        let text = """
            <MPD xmlns="urn:mpeg:dash:schema:mpd:2011" type="static" mediaPresentationDuration="PT8S">
              <Period duration="PT8S"><AdaptationSet contentType="video" mimeType="video/mp4">
                \(body)
                <Representation id="v" bandwidth="1000"/>
              </AdaptationSet></Period>
            </MPD>
            """
        return Result { () throws(DASHParseError) in
            try DASHManifestParser().parse(Data(text.utf8), url: URL(string: "https://example.com/m.mpd")!)
        }
    }

    @Test(
        "DASH numbers past 2^53, and products of two that would overflow, are errors naming the element",
        arguments: [
            #"duration="2" startNumber="9223372036854775807""#,
            #"duration="2" timescale="9223372036854775807""#,
            #"duration="9223372036854775807""#,
            #"duration="2" presentationTimeOffset="-9223372036854775808""#,
            #"duration="9007199254740992" timescale="1" presentationTimeOffset="9007199254740992""#,
            #"timescale="1""#,
        ])
    func dashNumbers(_ attributes: String) {
        let timeline =
            attributes == #"timescale="1""#
            ? #"<SegmentTimeline><S t="9007199254740990" d="9007199254740992" r="9007199254740992"/></SegmentTimeline>"#
            : ""
        let result = Self.mpd(attributes, timeline: timeline)
        guard case .failure(let error) = result else {
            if case .success(let presentation) = result, attributes.hasPrefix(#"duration="9007199254740992""#) {
                // 2^53 s segments: within bounds; the Period holds one, clipped to its 8 s.
                guard case .list(let segments) = presentation.periods[0].tracks[0].renditions[0].segments else {
                    Issue.record("not a list")
                    return
                }
                #expect(segments.count == 1)
                return
            }
            Issue.record("\(attributes) was read")
            return
        }
        #expect(error.description.count < 200, "\(error)")
    }

    @Test("a SegmentList longer than its Period is clipped at the Period's end, not listed as 0 s segments")
    func segmentListClipped() throws {
        let list = """
            <SegmentList timescale="1" duration="3">
              <SegmentURL media="a.m4s"/><SegmentURL media="b.m4s"/><SegmentURL media="c.m4s"/>
              <SegmentURL media="d.m4s"/><SegmentURL media="e.m4s"/>
            </SegmentList>
            """
        let presentation = try Self.mpd("", list: list).get()
        guard case .list(let segments) = presentation.periods[0].tracks[0].renditions[0].segments else {
            Issue.record("not a list")
            return
        }
        #expect(segments.map(\.reference) == ["a.m4s", "b.m4s", "c.m4s"])
        #expect(segments.map(\.duration) == [3, 3, 2])
    }
}
