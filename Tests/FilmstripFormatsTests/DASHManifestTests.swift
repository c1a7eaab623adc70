import FilmstripFormats
import Foundation
import Testing

private let mpdURL = URL(string: "https://cdn.example.com/show/manifest.mpd")!

private func parseMPD(_ text: String, limits: DASHManifestParser.Limits = .init()) throws -> Presentation {
    try DASHManifestParser(limits: limits).parse(Data(text.utf8), url: mpdURL)
}

private func mpdError(_ text: String, limits: DASHManifestParser.Limits = .init()) -> DASHParseError? {
    do {
        _ = try parseMPD(text, limits: limits)
        return nil
    } catch let error as DASHParseError {
        return error
    } catch {
        return nil
    }
}

private func mpd(_ body: String, attributes: String = #"type="static" mediaPresentationDuration="PT10S""#) -> String {
    """
    <?xml version="1.0" encoding="UTF-8"?>
    <MPD xmlns="urn:mpeg:dash:schema:mpd:2011" \(attributes)>
    \(body)
    </MPD>
    """
}

@Suite("DASH MPD parser")
struct DASHManifestTests {
    @Test("SegmentTemplate with $Number$, %05d widths, $RepresentationID$, $Bandwidth$ and $$")
    func numberTemplate() throws {
        let p = try parseMPD(
            mpd(
                """
                <Period><AdaptationSet contentType="video" mimeType="video/mp4">
                  <SegmentTemplate timescale="1000" duration="4000" startNumber="7"
                    initialization="$RepresentationID$/init.mp4" media="$RepresentationID$/$Bandwidth$/s$Number%05d$$$.m4s"/>
                  <Representation id="hd" bandwidth="2000000" width="1280" height="720" frameRate="30000/1001" codecs="avc1.64001f"/>
                </AdaptationSet></Period>
                """))
        let rendition = try #require(p.periods.first?.tracks.first?.renditions.first)
        #expect(rendition.width == 1280 && rendition.height == 720)
        #expect(abs((rendition.frameRate ?? 0) - 29.97) < 0.01)
        let segments = try #require(rendition.segments.references)
        #expect(segments.count == 3)  // 4 + 4 + a last one cut to 2 s
        #expect(segments.map(\.number) == [7, 8, 9])
        #expect(segments[0].url.absoluteString == "https://cdn.example.com/show/hd/2000000/s00007$.m4s")
        #expect(segments[2].start == 8 && segments[2].duration == 2)
        #expect(segments[0].initialization?.url.absoluteString == "https://cdn.example.com/show/hd/init.mp4")
    }

    @Test("SegmentTimeline: t, d, r, r=-1 up to the next S and to the period end; $Time$; presentationTimeOffset")
    func timeline() throws {
        let p = try parseMPD(
            mpd(
                """
                <Period duration="PT20S"><AdaptationSet mimeType="video/mp4">
                  <SegmentTemplate timescale="90000" presentationTimeOffset="900000" media="t$Time$.m4s">
                    <SegmentTimeline>
                      <S t="900000" d="180000" r="1"/>
                      <S d="90000" r="-1"/>
                      <S t="1440000" d="180000" r="-1"/>
                    </SegmentTimeline>
                  </SegmentTemplate>
                  <Representation id="v" bandwidth="1"/>
                </AdaptationSet></Period>
                """, attributes: #"type="static""#))
        let segments = try #require(p.periods[0].tracks[0].renditions[0].segments.references)
        // 2 x 2 s, then 1 s segments until t=16 s (media) = 6 s of period time, then 2 s segments to the 20 s end.
        #expect(segments.prefix(2).map(\.start) == [0, 2])
        #expect(segments[2].start == 4 && segments[2].duration == 1)
        #expect(segments[3].start == 5)
        #expect(segments[4].start == 6 && segments[4].duration == 2)
        #expect(segments.last?.end == 20)
        #expect(segments[0].url.lastPathComponent == "t900000.m4s")
        #expect(segments[0].timing == .mediaTime(offset: -10))
    }

    @Test(
        "periods: start from start or from the previous duration; BaseURL resolved MPD, Period, AdaptationSet, Representation"
    )
    func periodsAndBaseURLs() throws {
        let p = try parseMPD(
            mpd(
                """
                <BaseURL>https://edge.example.net/root/</BaseURL>
                <Period id="a" duration="PT6S"><BaseURL>p1/</BaseURL>
                  <AdaptationSet mimeType="video/mp4"><BaseURL>video/</BaseURL>
                    <SegmentTemplate timescale="1" duration="2" media="$Number$.m4s"/>
                    <Representation id="1" bandwidth="1"><BaseURL>r1/</BaseURL></Representation>
                  </AdaptationSet>
                </Period>
                <Period id="b"><BaseURL>/absolute/</BaseURL>
                  <AdaptationSet mimeType="audio/mp4" lang="fr"><Role schemeIdUri="urn:mpeg:dash:role:2011" value="main"/>
                    <SegmentTemplate timescale="1" duration="2" media="a$Number$.m4s"/>
                    <Representation id="2" bandwidth="1"><AudioChannelConfiguration schemeIdUri="x" value="2"/></Representation>
                  </AdaptationSet>
                </Period>
                """))
        #expect(p.periods.map(\.start) == [0, 6])
        #expect(p.periods[1].duration == 4)
        let first = try #require(p.periods[0].tracks[0].renditions[0].segments.references)
        #expect(first[0].url.absoluteString == "https://edge.example.net/root/p1/video/r1/1.m4s")
        #expect(first[0].discontinuitySequence == 0)
        let audio = p.periods[1].tracks[0]
        #expect(audio.kind == .audio && audio.language == "fr" && audio.isDefault && audio.roles == ["main"])
        #expect(audio.renditions[0].channels == "2")
        let second = try #require(audio.renditions[0].segments.references)
        #expect(second[0].url.absoluteString == "https://edge.example.net/absolute/a1.m4s")
        #expect(second[0].start == 6 && second[0].discontinuitySequence == 1)
    }

    @Test("SegmentList with mediaRange, SegmentBase with indexRange, and the live attributes")
    func listsBaseAndLive() throws {
        let p = try parseMPD(
            mpd(
                """
                <UTCTiming schemeIdUri="urn:mpeg:dash:utc:http-xsdate:2014" value="https://time.example.com/now"/>
                <Period start="PT0S"><AdaptationSet mimeType="video/mp4">
                  <Representation id="list" bandwidth="1"><BaseURL>one.mp4</BaseURL>
                    <SegmentList timescale="1000" duration="2000"><Initialization range="0-99"/>
                      <SegmentURL mediaRange="100-199"/><SegmentURL mediaRange="200-349"/></SegmentList>
                  </Representation>
                  <Representation id="base" bandwidth="1"><BaseURL>od.mp4</BaseURL>
                    <SegmentBase indexRange="800-899"><Initialization range="0-799"/></SegmentBase>
                  </Representation>
                  <Representation id="live" bandwidth="1">
                    <SegmentTemplate timescale="1" duration="2" startNumber="0" media="$Number$.m4s"/>
                  </Representation>
                </AdaptationSet></Period>
                """,
                attributes:
                    #"type="dynamic" availabilityStartTime="2026-01-01T00:00:00Z" minimumUpdatePeriod="PT2S" timeShiftBufferDepth="PT30S" suggestedPresentationDelay="PT6S""#
            ))
        #expect(p.isLive)
        #expect(p.availabilityStartTime == Date(timeIntervalSince1970: 1_767_225_600))
        #expect(p.minimumUpdatePeriod == 2 && p.timeShiftBufferDepth == 30 && p.suggestedPresentationDelay == 6)
        #expect(p.utcTiming == [.init(scheme: .httpXSDate, value: "https://time.example.com/now")])
        let renditions = p.periods[0].tracks[0].renditions
        let list = try #require(renditions[0].segments.references)
        #expect(list.map(\.byteRange) == [100..<200, 200..<350])
        #expect(
            list[0].initialization
                == InitializationSection(url: URL(string: "https://cdn.example.com/show/one.mp4")!, byteRange: 0..<100))
        guard case .segmentBase(let base) = renditions[1].segments else {
            Issue.record("not a SegmentBase")
            return
        }
        #expect(base.indexRange == 800..<900 && base.initialization.byteRange == 0..<800)
        guard case .template(let template) = renditions[2].segments else {
            Issue.record("a live template should stay a template")
            return
        }
        // 11 s after the availability start, segments 0..4 (ending at 2, 4, …, 10 s) are available.
        let available = try template.references(to: 11, completeOnly: true, limit: 100)
        #expect(available.map(\.number) == [0, 1, 2, 3, 4])
        let window = try template.references(periodTimeFrom: 5, to: 11, completeOnly: true, limit: 100)
        #expect(window.map(\.number) == [2, 3, 4])
    }

    @Test(
        "errors name the element and attribute",
        arguments: [
            (
                #"<Period><AdaptationSet><Representation id="v" bandwidth="fast"/></AdaptationSet></Period>"#,
                "Representation", "bandwidth"
            ),
            (#"<Period start="soon"/>"#, "Period", "start"),
            (
                #"<Period><AdaptationSet><SegmentTemplate timescale="x" media="a"/><Representation id="v" bandwidth="1"/></AdaptationSet></Period>"#,
                "SegmentTemplate", "timescale"
            ),
            (
                #"<Period><AdaptationSet><Representation bandwidth="1"/></AdaptationSet></Period>"#, "Representation",
                "id"
            ),
        ])
    func attributeErrors(_ body: String, _ element: String, _ attribute: String) throws {
        let error = try #require(mpdError(mpd(body)))
        #expect(error.element == element && error.attribute == attribute, "\(error)")
        #expect(error.line != nil)
    }

    @Test("malformed XML gives its line")
    func malformedXML() throws {
        let error = try #require(mpdError("<MPD type=\"static\">\n<Period>\n</MPD>"))
        #expect(error.kind == .malformedXML && error.line == 3, "\(error)")
        #expect(mpdError("<html><body/></html>")?.kind == .notAnMPD)
        #expect(mpdError("")?.kind == .malformedXML)
    }

    @Test("a DTD or an entity is refused before anything is expanded")
    func doctype() throws {
        let laughs = """
            <?xml version="1.0"?>
            <!DOCTYPE MPD [<!ENTITY lol "lol"><!ENTITY lol2 "&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;">]>
            <MPD type="static"><Period/></MPD>
            """
        #expect(mpdError(laughs)?.kind == .refused)
        #expect(mpdError(#"<MPD type="static"><BaseURL>&ext;</BaseURL><Period/></MPD>"#)?.kind == .refused)
        // External entities and DTDs (file:, http:), parameter entities, and the quadratic blow-up (one large entity
        // referenced many times): each refused at its declaration, nothing fetched or expanded.
        let big = String(repeating: "x", count: 100_000)
        for hostile in [
            #"<!DOCTYPE MPD SYSTEM "file:///etc/passwd"><MPD/>"#,
            #"<!DOCTYPE MPD [<!ENTITY xxe SYSTEM "file:///etc/passwd">]><MPD><BaseURL>&xxe;</BaseURL></MPD>"#,
            #"<!DOCTYPE MPD [<!ENTITY % p SYSTEM "http://127.0.0.1/evil.dtd"> %p;]><MPD/>"#,
            "<!DOCTYPE MPD [<!ENTITY a \"\(big)\">]><MPD>" + String(repeating: "&a;", count: 100_000) + "</MPD>",
            #"<MPD><BaseURL>&#x110000;</BaseURL></MPD>"#,
        ] {
            let error = mpdError(hostile)
            #expect(error?.kind == .refused || error?.kind == .malformedXML, "\(String(describing: error))")
        }
        // Nesting is bounded too (no recursion to exhaust the stack).
        let deep =
            "<MPD>" + String(repeating: "<a>", count: 100_000) + String(repeating: "</a>", count: 100_000) + "</MPD>"
        #expect(mpdError(deep)?.kind == .tooLarge)
        // The predefined entities and character references are fine.
        let p = try parseMPD(
            #"<MPD type="static" mediaPresentationDuration="PT1S"><BaseURL>a&amp;b&#47;</BaseURL><Period><AdaptationSet mimeType="video/mp4"><Representation id="r" bandwidth="1"/></AdaptationSet></Period></MPD>"#
        )
        #expect(
            p.periods[0].tracks[0].renditions[0].segments.references?.first?.url.absoluteString
                == "https://cdn.example.com/show/a&b/")
    }

    @Test("ContentProtection is read (scheme, default key id, ClearKey's licence URL); in an image track, refused")
    func protection() throws {
        let p = try parseMPD(
            mpd(
                #"<Period><AdaptationSet mimeType="video/mp4"><ContentProtection schemeIdUri="urn:mpeg:dash:mp4protection:2011" value="cbcs" xmlns:cenc="urn:mpeg:cenc:2013" cenc:default_KID="00112233-4455-6677-8899-AABBCCDDEEFF"/><ContentProtection schemeIdUri="urn:uuid:E2719D58-A985-B3C9-781A-B030AF78D30E"><clearkey:Laurl xmlns:clearkey="http://dashif.org/guidelines/clearKey" Lic_type="EME-1.0">https://license.example/ck</clearkey:Laurl></ContentProtection><SegmentTemplate timescale="1" duration="1" media="$Number$.m4s"/><Representation id="v" bandwidth="1"/></AdaptationSet></Period>"#
            ))
        #expect(p.protection.count == 2)
        #expect(p.protection[0].scheme == "cbcs")
        #expect(p.protection[0].keyIDs == [StreamProtection.keyID("00112233445566778899aabbccddeeff")!])
        #expect(
            p.protection[1].isClearKey && p.protection[1].licenseURL?.absoluteString == "https://license.example/ck")
        let error = try #require(
            mpdError(
                mpd(
                    #"<Period><AdaptationSet contentType="image"><ContentProtection schemeIdUri="urn:mpeg:dash:mp4protection:2011"/><Representation id="t" bandwidth="1"/></AdaptationSet></Period>"#
                )))
        #expect(error.kind == .unsupported && error.message.contains("protected content"))
        let badKID = mpdError(
            mpd(
                #"<Period><AdaptationSet><ContentProtection schemeIdUri="urn:mpeg:dash:mp4protection:2011" cenc:default_KID="zz"/><Representation id="v" bandwidth="1"/></AdaptationSet></Period>"#
            ))
        #expect(badKID?.kind == .malformed)
    }

    @Test("bounds: bytes, elements and listed segments")
    func bounds() throws {
        let body =
            #"<Period><AdaptationSet mimeType="video/mp4"><SegmentTemplate timescale="1" duration="1" media="$Number$"/><Representation id="v" bandwidth="1"/></AdaptationSet></Period>"#
        #expect(mpdError(mpd(body), limits: .init(maximumBytes: 100))?.kind == .tooLarge)
        #expect(
            mpdError(
                mpd(body, attributes: #"type="static" mediaPresentationDuration="PT100000S""#),
                limits: .init(maximumEntries: 1000))?.kind == .tooLarge)
        let huge = mpd(
            #"<Period><AdaptationSet mimeType="video/mp4"><SegmentTemplate media="$Time$"><SegmentTimeline><S t="0" d="1" r="2000000000"/></SegmentTimeline></SegmentTemplate><Representation id="v" bandwidth="1"/></AdaptationSet></Period>"#,
            attributes: #"type="static""#)
        #expect(mpdError(huge, limits: .init(maximumEntries: 1000))?.kind == .tooLarge)
    }

    @Test("xs:duration and xs:dateTime")
    func values() {
        #expect(XSValues.duration("PT1H2M3.5S") == 3723.5)
        #expect(XSValues.duration("P1DT1S") == 86_401)
        #expect(XSValues.duration("PT") == nil)
        #expect(XSValues.duration("1S") == nil)
        #expect(XSValues.dateTime("1970-01-01T00:00:10Z")?.timeIntervalSince1970 == 10)
        #expect(XSValues.dateTime("1970-01-01T01:00:00.5+01:00")?.timeIntervalSince1970 == 0.5)
        #expect(XSValues.dateTime("2026-02-30T00:00") == nil)
    }

    @Test("an HLS master maps into the model: video renditions, audio by language, I-frame and image tracks")
    func hlsMaster() throws {
        let text = """
            #EXTM3U
            #EXT-X-MEDIA:TYPE=AUDIO,GROUP-ID="aud",NAME="English",LANGUAGE="en",DEFAULT=YES,AUTOSELECT=YES,CHANNELS="2",URI="en.m3u8"
            #EXT-X-MEDIA:TYPE=AUDIO,GROUP-ID="aud",NAME="Français",LANGUAGE="fr",URI="fr.m3u8"
            #EXT-X-STREAM-INF:BANDWIDTH=800000,RESOLUTION=640x360,CODECS="avc1.64001e,mp4a.40.2",AUDIO="aud"
            low.m3u8
            #EXT-X-STREAM-INF:BANDWIDTH=3000000,RESOLUTION=1280x720,AUDIO="aud"
            high.m3u8
            #EXT-X-I-FRAME-STREAM-INF:BANDWIDTH=100000,RESOLUTION=1280x720,URI="iframes.m3u8"
            #EXT-X-IMAGE-STREAM-INF:BANDWIDTH=10000,RESOLUTION=160x90,URI="images.m3u8"
            """
        let base = URL(string: "https://cdn.example.com/hls/master.m3u8")!
        let p = try HLSPlaylistParser().parse(Data(text.utf8), url: base).presentation(url: base)
        let kinds = p.periods[0].tracks.map(\.kind)
        #expect(kinds == [.video, .audio, .audio, .iFrame, .image])
        #expect(p.periods[0].tracks[0].renditions.map(\.height) == [360, 720])
        #expect(p.periods[0].tracks[1].language == "en" && p.periods[0].tracks[1].isDefault)
        #expect(p.periods[0].tracks[1].renditions[0].channels == "2")
        #expect(
            p.periods[0].tracks[0].renditions[1].segments
                == .mediaPlaylist(URL(string: "https://cdn.example.com/hls/high.m3u8")!))
    }

    @Test("an HLS media playlist keeps byte ranges, maps, keys and discontinuities as segment references")
    func hlsMedia() throws {
        let text = """
            #EXTM3U
            #EXT-X-TARGETDURATION:2
            #EXT-X-MAP:URI="all.mp4",BYTERANGE="800@0"
            #EXTINF:2.0,
            #EXT-X-BYTERANGE:1000@800
            all.mp4
            #EXTINF:1.5,
            #EXT-X-BYTERANGE:500
            all.mp4
            #EXT-X-DISCONTINUITY
            #EXTINF:2.0,
            other.ts
            #EXT-X-ENDLIST
            """
        let base = URL(string: "https://cdn.example.com/hls/index.m3u8")!
        let p = try HLSPlaylistParser().parse(Data(text.utf8), url: base).presentation(url: base)
        #expect(!p.isLive && p.duration == 5.5)
        let s = try #require(p.periods[0].tracks[0].renditions[0].segments.references)
        #expect(s.map(\.start) == [0, 2, 3.5])
        #expect(s.map(\.byteRange) == [800..<1800, 1800..<2300, nil])
        #expect(s[0].initialization?.byteRange == 0..<800)
        #expect(s.map(\.discontinuitySequence) == [0, 0, 1])
    }
}

@Suite("sidx reader")
struct SegmentIndexBoxTests {
    static func box(version: UInt8, references: [(size: UInt32, duration: UInt32)], firstOffset: UInt32 = 0) -> [UInt8]
    {
        var body: [UInt8] = [version, 0, 0, 0]
        func u32(_ v: UInt32) {
            body += [UInt8(v >> 24), UInt8((v >> 16) & 0xFF), UInt8((v >> 8) & 0xFF), UInt8(v & 0xFF)]
        }
        u32(1)  // reference ID
        u32(1000)  // timescale
        if version == 0 {
            u32(500)
            u32(firstOffset)
        } else {
            u32(0); u32(500); u32(0); u32(firstOffset)
        }
        body += [0, 0, 0, UInt8(references.count)]
        for r in references {
            u32(r.size)
            u32(r.duration)
            u32(0x9000_0000)
        }
        let size = UInt32(body.count + 8)
        return [UInt8(size >> 24), UInt8((size >> 16) & 0xFF), UInt8((size >> 8) & 0xFF), UInt8(size & 0xFF)]
            + Array("sidx".utf8) + body
    }

    @Test("subsegment ranges follow the box (and first_offset), times accumulate", arguments: [UInt8(0), 1])
    func parse(_ version: UInt8) throws {
        let bytes = Self.box(version: version, references: [(100, 2000), (150, 2000)], firstOffset: 10)
        let index = try SegmentIndexBox.parse(bytes, offset: 1000)
        let end = Int64(1000 + bytes.count)
        #expect(index.timescale == 1000 && index.earliestPresentationTime == 500)
        #expect(index.entries.map(\.byteRange) == [(end + 10)..<(end + 110), (end + 110)..<(end + 260)])
        #expect(index.entries.map(\.time) == [500, 2500])
        #expect(index.entries.allSatisfy { $0.startsWithSAP })
    }

    @Test("truncated, oversized and hierarchical indexes are errors")
    func errors() {
        let bytes = Self.box(version: 0, references: [(100, 2000)])
        let truncated = #expect(throws: SegmentIndexBox.ParseError.self) {
            try SegmentIndexBox.parse(Array(bytes.prefix(30)), offset: 0)
        }
        #expect(truncated?.isUnsupported == false)
        #expect(throws: SegmentIndexBox.ParseError.self) {
            try SegmentIndexBox.parse([0, 0, 0, 8] + Array("free".utf8), offset: 0)
        }
        var hierarchical = bytes
        hierarchical[32] |= 0x80
        // Well formed, but a feature not read: said so by a flag, not by the message's words.
        let unsupported = #expect(throws: SegmentIndexBox.ParseError.self) {
            try SegmentIndexBox.parse(hierarchical, offset: 0)
        }
        #expect(unsupported?.isUnsupported == true)
    }
}
