import FilmstripFormats
import Foundation
import Testing

@Suite("CMCD decoding and what the encoder refuses to write")
struct CmcdDecoderTests {
    @Test("a request of the DASH-IF reference player reads back field by field")
    func reference() throws {
        let text =
            #"bl=21300,br=3200,bs,cid="faec5fc2-ac30-11ea-bb37-0242ac130002",d=4004,dl=18500,mtp=48100,"#
            + #"nor="..%2F300kbps%2Ftrack.m4v",nrr="12323-48763",ot=v,pr=1.08,rtp=12000,sf=d,"#
            + #"sid="6e2fb550-c457-11e9-bb97-0800200c9a66",st=v,su,tb=6000,v=2,com.example-myNumericKey=500"#
        let data = try CmcdDecoder.decode(text)
        #expect(data.bufferLength == 21300)
        #expect(data.encodedBitrate == 3200)
        #expect(data.bufferStarvation && data.startup)
        #expect(data.contentID == "faec5fc2-ac30-11ea-bb37-0242ac130002")
        #expect(data.nextObjectRequest == "../300kbps/track.m4v")
        #expect(data.nextRangeRequest == "12323-48763")
        #expect(data.objectType == .video && data.streamingFormat == .dash && data.streamType == .vod)
        #expect(data.playbackRate == 1.08 && data.version == 2 && data.topBitrate == 6000)
        #expect(data.custom == ["com.example-myNumericKey": .integer(500)])
        let kept = try CmcdDecoder.decode(#"com.example-n=500,x-s="a\"b\\c",x-t=tok:1/2,x-f=?0,x-d=-1.5"#)
        #expect(kept.custom["com.example-n"] == .integer(500))
        #expect(kept.custom["x-s"] == .string(#"a"b\c"#))
        #expect(kept.custom["x-t"] == .token("tok:1/2"))
        #expect(kept.custom["x-f"] == .boolean(false))
        #expect(kept.custom["x-d"] == .decimal(-1.5))
    }

    @Test("headers (any case) and the query parameter read the same data as the encoder wrote")
    func modes() throws {
        var data = CmcdData(sessionID: "s-1", contentID: "c-1", streamingFormat: .hls, streamType: .live)
        data.objectType = .muxed
        data.bufferLength = 12_345
        data.playbackRate = 2
        data.nextObjectRequest = "seg 2.ts"
        let text = CmcdEncoder.encode(data)
        let headers = Dictionary(
            uniqueKeysWithValues: CmcdEncoder.headers(data).map { ($0.key.uppercased(), $0.value) })
        #expect(
            CmcdEncoder.encode(try CmcdDecoder.decode(headers: headers.merging(["Host": "x"]) { a, _ in a })) == text)
        let url = CmcdEncoder.url(URL(string: "https://cdn.example/a.ts?token=1")!, adding: data)
        let fromQuery = try #require(try CmcdDecoder.decode(url: url))
        #expect(CmcdEncoder.encode(fromQuery) == text)
        #expect(fromQuery.nextObjectRequest == "seg 2.ts")
        #expect(try CmcdDecoder.decode(url: URL(string: "https://cdn.example/a.ts")!) == nil)
        #expect(throws: CmcdDecoder.DecodeError.self, "a key in two headers") {
            try CmcdDecoder.decode(headers: ["CMCD-Object": "br=1", "CMCD-Request": "br=2"])
        }
    }

    @Test(
        "malformed CMCD is an error with its offset",
        arguments: [
            ("br=1,br=2", 5), (#"sid="open"#, 4), (#"sid="a\nb""#, 6), ("br=fast", 0), ("ot=q", 0), ("bl=1,", 5),
            ("=1", 0), ("su=?2", 3), ("pr=1.2345", 3), ("br=1;d=2", 4), ("sid=token", 0), ("x-a=\"\u{7}\"", 5),
        ])
    func malformed(text: String, offset: Int) {
        #expect(throws: CmcdDecoder.DecodeError.self) { try CmcdDecoder.decode(text) }
        do {
            _ = try CmcdDecoder.decode(text)
        } catch {
            #expect(error.offset == offset, "\(error)")
        }
    }

    @Test("the encoder never writes what would break the syntax or a header: CR/LF, bad tokens and keys, huge numbers")
    func refusals() throws {
        var data = CmcdData(sessionID: "a\r\nX-Injected: 1", contentID: "caf\u{E9}")
        data.nextRangeRequest = "0-99\n"
        data.encodedBitrate = 1e300
        data.bufferLength = -.infinity
        data.playbackRate = 9.3e18
        data.custom = [
            "x-token": .token("a,b=c"), "x-ok": .token("fine"), "bad key-1": .integer(1), "x-big": .integer(.max),
            "x-min": .integer(.min),
            "x,y-z": .boolean(true), "x-text": .string("line\nbreak"),
        ]
        #expect(CmcdEncoder.encode(data) == "x-ok=fine")
        for value in CmcdEncoder.headers(data).values { #expect(!value.contains("\n") && !value.contains("\r")) }
        #expect(try CmcdDecoder.decode(CmcdEncoder.encode(data)).custom == ["x-ok": .token("fine")])
    }
}
