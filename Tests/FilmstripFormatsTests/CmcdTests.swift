import FilmstripFormats
import Foundation
import Testing

@Suite("CMCD encoding (CTA-5004 v1)")
struct CmcdTests {
    /// The input of the SPEC example, which is also the common input of common-media-library's CMCD tests
    /// (streaming-video-technology-alliance/common-media-library, lib/test/cmcd/data/CMCD_INPUT.ts).
    func specInput() -> CmcdData {
        var data = CmcdData(sessionID: "session-id", contentID: "content-id")
        data.startup = false
        data.nextObjectRequest = "../testing/3.m4v"
        data.nextRangeRequest = "0-99"
        data.objectDuration = 324.69
        data.measuredThroughput = 10049
        data.bufferStarvation = true
        data.encodedBitrate = 200
        data.version = 1
        data.playbackRate = 1
        data.objectType = .manifest
        return data
    }

    @Test("the SPEC example")
    func specExample() {
        #expect(
            CmcdEncoder.encode(specInput())
                == #"br=200,bs,cid="content-id",d=325,mtp=10000,nor="..%2Ftesting%2F3.m4v",nrr="0-99",ot=m,sid="session-id""#
        )
    }

    @Test("custom keys: strings, integers, booleans and tokens; false is omitted; quotes are escaped")
    func customKeys() {
        // common-media-library's v1 vector (CMCD_INPUT with its custom keys → CMCD_STRING, v1 keys only).
        var data = specInput()
        data.custom = [
            "com.example-hello": .string("world"), "com.example-testing": .integer(1234),
            "com.example-exists": .boolean(true), "com.example-notExists": .boolean(false),
            "com.example-token": .token("s"), "com.example-quote": .string("\"Quote\""),
            "nohyphen": .string("dropped"),
        ]
        #expect(
            CmcdEncoder.encode(data)
                == #"br=200,bs,cid="content-id",com.example-exists,com.example-hello="world",com.example-quote="\"Quote\"",com.example-testing=1234,com.example-token=s,d=325,mtp=10000,nor="..%2Ftesting%2F3.m4v",nrr="0-99",ot=m,sid="session-id""#
        )
    }

    @Test("invalid values are dropped (common-media-library: 'ignore invalid values')")
    func invalidValues() {
        var data = CmcdData()
        data.measuredThroughput = .nan
        data.encodedBitrate = .infinity
        data.nextObjectRequest = ""
        data.sessionID = nil
        data.contentID = nil
        data.startup = false
        #expect(CmcdEncoder.encode(data) == "")
        #expect(CmcdEncoder.headers(data).isEmpty)
        #expect(CmcdEncoder.query(data) == "")
    }

    @Test("headers: one per non-empty shard (common-media-library: 'ignores empty shards')")
    func emptyShards() {
        var data = CmcdData()
        data.encodedBitrate = 200
        #expect(CmcdEncoder.headers(data) == ["CMCD-Object": "br=200"])
    }

    @Test("headers: a real request of the DASH-IF reference player (montevideo-tech/cmcd-validator test case)")
    func dashReferenceHeaders() {
        var data = CmcdData(sessionID: "b62ac932-1967-4368-8e9a-31df70ef2bc5", streamingFormat: .dash, streamType: .vod)
        data.encodedBitrate = 67
        data.objectDuration = 4011
        data.objectType = .audio
        data.topBitrate = 67
        data.bufferLength = 31700
        data.deadline = 31700
        data.measuredThroughput = 10600
        data.nextObjectRequest = "../300kbps/segment35.m4v"
        data.requestedMaximumThroughput = 100
        #expect(
            CmcdEncoder.headers(data) == [
                "CMCD-Object": "br=67,d=4011,ot=a,tb=67",
                "CMCD-Request": #"bl=31700,dl=31700,mtp=10600,nor="..%2F300kbps%2Fsegment35.m4v""#,
                "CMCD-Session": #"sf=d,sid="b62ac932-1967-4368-8e9a-31df70ef2bc5",st=v"#,
                "CMCD-Status": "rtp=100",
            ])
    }

    @Test("headers: the object shard of Eyevinn/node-cmcd's README example; all four shards")
    func eyevinnHeaders() {
        var data = CmcdData(sessionID: "6e2fb550-c457-11e9-bb97-0800200c9a66")
        data.bufferStarvation = true
        data.requestedMaximumThroughput = 15000
        data.encodedBitrate = 3200
        data.objectDuration = 4004
        data.objectType = .video
        data.topBitrate = 6000
        data.measuredThroughput = 25400
        let headers = CmcdEncoder.headers(data)
        #expect(headers["CMCD-Object"] == "br=3200,d=4004,ot=v,tb=6000")
        #expect(headers["CMCD-Request"] == "mtp=25400")
        #expect(headers["CMCD-Session"] == #"sid="6e2fb550-c457-11e9-bb97-0800200c9a66""#)
        #expect(headers["CMCD-Status"] == "bs,rtp=15000")
    }

    @Test("custom keys default to the request shard, or go where told")
    func customShards() {
        var data = CmcdData()
        data.custom = ["com.example-a": .integer(1), "com.example-b": .token("x")]
        #expect(CmcdEncoder.headers(data) == ["CMCD-Request": "com.example-a=1,com.example-b=x"])
        #expect(
            CmcdEncoder.headers(data, customShards: ["com.example-b": .session])
                == ["CMCD-Request": "com.example-a=1", "CMCD-Session": "com.example-b=x"])
    }

    @Test("rounding: bl, dl, mtp and rtp to the nearest 100; br, d and tb to integers; pr and v omitted at 1")
    func rounding() {
        var data = CmcdData()
        data.bufferLength = 2349
        data.deadline = 2350
        data.measuredThroughput = 49
        data.requestedMaximumThroughput = 151
        data.encodedBitrate = 3199.5
        data.objectDuration = 2000.4
        data.playbackRate = 1.25
        data.version = 2
        #expect(CmcdEncoder.encode(data) == "bl=2300,br=3200,d=2000,dl=2400,mtp=0,pr=1.25,rtp=200,v=2")
        data.playbackRate = 2.0 / 3.0
        #expect(CmcdEncoder.encode(data, keys: ["pr"]) == "pr=0.667")
        data.playbackRate = 1
        data.version = 1
        #expect(CmcdEncoder.encode(data, keys: ["pr", "v"]) == "")
    }

    @Test("query mode: one percent-encoded CMCD parameter, replacing an existing one")
    func queryMode() {
        let data = specInput()
        let query = CmcdEncoder.query(data)
        #expect(query.hasPrefix("CMCD=br%3D200%2Cbs%2Ccid%3D%22content-id%22%2Cd%3D325"))
        #expect(query.contains("nor%3D%22..%252Ftesting%252F3.m4v%22"))
        let url = URL(string: "https://cdn.example.com/v/seg-1.m4s?token=abc&CMCD=old")!
        let with = CmcdEncoder.url(url, adding: data)
        #expect(with.absoluteString.hasPrefix("https://cdn.example.com/v/seg-1.m4s?token=abc&CMCD=br%3D200"))
        #expect(with.absoluteString.components(separatedBy: "CMCD=").count == 2)
        let decoded = URLComponents(url: with, resolvingAgainstBaseURL: false)?.queryItems?.first { $0.name == "CMCD" }?
            .value
        #expect(decoded == CmcdEncoder.encode(data))
        #expect(
            CmcdEncoder.url(url, adding: CmcdData()).absoluteString == "https://cdn.example.com/v/seg-1.m4s?token=abc")
    }

    @Test("nor is made relative to the request (common-media-library: 'converts to relative path')")
    func relativeNor() {
        var data = CmcdData()
        data.nextObjectRequest = "http://test.com/base/segments/video/1.mp4"
        let base = URL(string: "http://test.com/base/manifest/manifest.mpd")!
        #expect(CmcdEncoder.encode(data, baseURL: base) == #"nor="..%2Fsegments%2Fvideo%2F1.mp4""#)
        data.nextObjectRequest = "http://other.example/1.mp4"
        #expect(CmcdEncoder.encode(data, baseURL: base) == #"nor="http%3A%2F%2Fother.example%2F1.mp4""#)
    }

    @Test("only the configured keys are sent (common-media-library: 'filters keys')")
    func filtering() {
        let data = CmcdData(sessionID: "session-id", contentID: "content-id")
        #expect(CmcdEncoder.encode(data, keys: ["cid"]) == #"cid="content-id""#)
    }

    @Test("session and content ids are at most 64 characters; tokens are bare")
    func limits() {
        let long = String(repeating: "x", count: 100)
        let data = CmcdData(sessionID: long, streamingFormat: .hls, streamType: .live)
        #expect(CmcdEncoder.encode(data) == "sf=h,sid=\"\(String(repeating: "x", count: 64))\",st=l")
    }
}
