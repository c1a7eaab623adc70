import FilmstripFormats
import Foundation
import Testing

let playlistURL = URL(string: "https://cdn.example.com/live/stream/master.m3u8")!

func parseHLS(_ text: String) throws(HLSParseError) -> HLSPlaylist {
    try HLSPlaylistParser().parse(Array(text.utf8), url: playlistURL)
}

struct NotMedia: Error {}

func media(_ text: String) throws -> HLSMediaPlaylist {
    guard case .media(let playlist) = try parseHLS(text) else { throw NotMedia() }
    return playlist
}

func hlsError(_ text: String) -> HLSParseError? {
    do {
        _ = try parseHLS(text)
        return nil
    } catch { return error }
}

@Suite("HLS playlists")
struct HLSPlaylistTests {
    @Test("master: variants, renditions, I-frame and image streams; URIs resolved")
    func master() throws {
        let text = """
            #EXTM3U
            #EXT-X-VERSION:6
            #EXT-X-INDEPENDENT-SEGMENTS
            #EXT-X-MEDIA:TYPE=AUDIO,GROUP-ID="aud",NAME="English",LANGUAGE="en",DEFAULT=YES,AUTOSELECT=YES,URI="audio/en.m3u8"
            #EXT-X-STREAM-INF:BANDWIDTH=1280000,AVERAGE-BANDWIDTH=1000000,CODECS="avc1.4d401f,mp4a.40.2",RESOLUTION=1280x720,FRAME-RATE=25.000,AUDIO="aud"
            720p/index.m3u8
            #EXT-X-STREAM-INF:BANDWIDTH=640000,RESOLUTION=640x360
            /abs/360p.m3u8
            #EXT-X-I-FRAME-STREAM-INF:BANDWIDTH=86000,CODECS="avc1.4d401f",RESOLUTION=1280x720,URI="720p/iframes.m3u8"
            #EXT-X-IMAGE-STREAM-INF:BANDWIDTH=12000,RESOLUTION=160x90,CODECS="jpeg",URI="thumbs/index.m3u8"
            #EXT-X-SOMETHING-NEW:FOO=BAR
            """
        guard case .master(let master) = try parseHLS(text) else {
            Issue.record("expected a master playlist")
            return
        }
        #expect(master.version == 6 && master.independentSegments)
        #expect(master.variants.count == 2)
        let top = master.variants[0]
        #expect(top.uri.absoluteString == "https://cdn.example.com/live/stream/720p/index.m3u8")
        #expect(top.bandwidth == 1_280_000 && top.averageBandwidth == 1_000_000)
        #expect(top.codecs == "avc1.4d401f,mp4a.40.2")
        #expect(top.resolution == PixelSize(width: 1280, height: 720) && top.frameRate == 25 && top.audio == "aud")
        #expect(master.variants[1].uri.absoluteString == "https://cdn.example.com/abs/360p.m3u8")
        #expect(
            master.renditions == [
                HLSRendition(
                    type: "AUDIO", groupID: "aud", name: "English", language: "en", isDefault: true, autoselect: true,
                    uri: URL(string: "https://cdn.example.com/live/stream/audio/en.m3u8")!)
            ])
        #expect(master.iFrameStreams.first?.uri.lastPathComponent == "iframes.m3u8")
        #expect(master.imageStreams.first?.resolution == PixelSize(width: 160, height: 90))
    }

    @Test("VOD media playlist: durations, titles, sequence numbers, end")
    func vod() throws {
        let playlist = try media(
            """
            #EXTM3U
            #EXT-X-VERSION:3
            #EXT-X-TARGETDURATION:6
            #EXT-X-MEDIA-SEQUENCE:100
            #EXT-X-PLAYLIST-TYPE:VOD
            # a comment
            #EXTINF:6.006,first
            seg-100.ts
            #EXTINF:5.5,
            seg-101.ts
            #EXTINF:2
            https://other.example/seg-102.ts
            #EXT-X-ENDLIST
            """)
        #expect(playlist.targetDuration == 6 && playlist.mediaSequence == 100 && playlist.playlistType == "VOD")
        #expect(playlist.endList && !playlist.isLive)
        #expect(playlist.segments.map(\.duration) == [6.006, 5.5, 2])
        #expect(playlist.segments.map(\.sequenceNumber) == [100, 101, 102])
        #expect(playlist.segments.map(\.title) == ["first", nil, nil])
        #expect(playlist.segments[0].uri.absoluteString == "https://cdn.example.com/live/stream/seg-100.ts")
        #expect(playlist.segments[2].uri.host == "other.example")
        #expect(abs(playlist.duration - 13.506) < 1e-9)
    }

    @Test("a live playlist has no end; CRLF and a BOM are fine")
    func live() throws {
        let text = "\u{FEFF}#EXTM3U\r\n#EXT-X-TARGETDURATION:4\r\n#EXT-X-MEDIA-SEQUENCE:7\r\n#EXTINF:4.0,\r\na.ts\r\n"
        let playlist = try media(text)
        #expect(playlist.isLive && playlist.segments.count == 1 && playlist.segments[0].sequenceNumber == 7)
    }

    @Test("byte ranges with explicit and implicit offsets; EXT-X-MAP with its own range")
    func byteRanges() throws {
        let playlist = try media(
            """
            #EXTM3U
            #EXT-X-TARGETDURATION:4
            #EXT-X-MAP:URI="main.mp4",BYTERANGE="720@0"
            #EXTINF:4,
            #EXT-X-BYTERANGE:1000@720
            main.mp4
            #EXTINF:4,
            #EXT-X-BYTERANGE:2000
            main.mp4
            #EXTINF:4,
            #EXT-X-BYTERANGE:500@10000
            other.mp4
            #EXTINF:4,
            #EXT-X-BYTERANGE:300
            main.mp4
            #EXT-X-ENDLIST
            """)
        #expect(playlist.segments.map(\.byteRange) == [720..<1720, 1720..<3720, 10000..<10500, 3720..<4020])
        #expect(
            playlist.segments[0].map
                == HLSMap(uri: URL(string: "https://cdn.example.com/live/stream/main.mp4")!, byteRange: 0..<720))
        let error = hlsError("#EXTM3U\n#EXT-X-TARGETDURATION:4\n#EXTINF:4,\n#EXT-X-BYTERANGE:100\nx.mp4\n")
        #expect(error?.kind == .missing && error?.line == 5)
    }

    @Test("keys: NONE, AES-128 with and without IV; other methods are unsupported")
    func keys() throws {
        let playlist = try media(
            """
            #EXTM3U
            #EXT-X-TARGETDURATION:4
            #EXTINF:4,
            clear.ts
            #EXT-X-KEY:METHOD=AES-128,URI="https://keys.example/k1",IV=0x00000000000000000000000000000001
            #EXTINF:4,
            enc1.ts
            #EXT-X-KEY:METHOD=AES-128,URI="k2"
            #EXTINF:4,
            enc2.ts
            #EXT-X-KEY:METHOD=NONE
            #EXTINF:4,
            clear2.ts
            #EXT-X-ENDLIST
            """)
        #expect(playlist.segments[0].key == nil && playlist.segments[3].key == nil)
        #expect(playlist.segments[1].key?.uri.absoluteString == "https://keys.example/k1")
        #expect(playlist.segments[1].key?.iv == Array(repeating: 0, count: 15) + [1])
        #expect(playlist.segments[2].key?.iv == nil)
        #expect(playlist.segments[2].key?.uri.absoluteString == "https://cdn.example.com/live/stream/k2")
        let other = hlsError("#EXTM3U\n#EXT-X-TARGETDURATION:4\n#EXT-X-KEY:METHOD=ROT13,URI=\"k\"\n")
        #expect(other?.kind == .unsupported && other?.line == 3 && other?.message.contains("ROT13") == true)
        // SAMPLE-AES of MPEG-TS segments (Apple's sample encryption of elementary streams) is refused at the segment.
        let sample = hlsError(
            "#EXTM3U\n#EXT-X-TARGETDURATION:4\n#EXT-X-KEY:METHOD=SAMPLE-AES,URI=\"k\"\n#EXTINF:4,\na.ts\n")
        #expect(sample?.kind == .unsupported && sample?.line == 5)
        #expect(sample?.message.contains("SAMPLE-AES") == true)
    }

    @Test("Common Encryption over fMP4: SAMPLE-AES is cbcs, SAMPLE-AES-CTR cenc; the key id or licence recorded")
    func sampleEncryption() throws {
        let identity = try media(
            """
            #EXTM3U
            #EXT-X-TARGETDURATION:2
            #EXT-X-MAP:URI="v/init.mp4"
            #EXT-X-KEY:METHOD=SAMPLE-AES,URI="data:text/plain;base64,ABEiM0RVZneImaq7zN3u/w==",KEYFORMAT="identity"
            #EXTINF:2,
            v/1.m4s
            #EXT-X-ENDLIST
            """)
        #expect(identity.segments[0].key == nil)
        #expect(identity.sampleEncryption?.scheme == "cbcs")
        #expect(identity.sampleEncryption?.keyIDs == [StreamProtection.keyID("00112233445566778899aabbccddeeff")!])
        let clearKey = try media(
            """
            #EXTM3U
            #EXT-X-TARGETDURATION:2
            #EXT-X-MAP:URI="v/init.mp4"
            #EXT-X-KEY:METHOD=SAMPLE-AES-CTR,URI="license",KEYFORMAT="urn:uuid:e2719d58-a985-b3c9-781a-b030af78d30e"
            #EXTINF:2,
            v/1.m4s
            #EXT-X-ENDLIST
            """)
        #expect(clearKey.sampleEncryption?.scheme == "cenc" && clearKey.sampleEncryption?.isClearKey == true)
        #expect(clearKey.sampleEncryption?.licenseURL?.absoluteString == "https://cdn.example.com/live/stream/license")
    }

    @Test("discontinuities and program date-time, carried forward until a discontinuity")
    func discontinuities() throws {
        let playlist = try media(
            """
            #EXTM3U
            #EXT-X-TARGETDURATION:4
            #EXT-X-DISCONTINUITY-SEQUENCE:3
            #EXT-X-PROGRAM-DATE-TIME:2026-11-22T10:00:00.000Z
            #EXTINF:4,
            a.ts
            #EXTINF:4,
            b.ts
            #EXT-X-DISCONTINUITY
            #EXTINF:4,
            c.ts
            #EXT-X-ENDLIST
            """)
        #expect(playlist.segments.map(\.discontinuitySequence) == [3, 3, 4])
        #expect(playlist.segments.map(\.discontinuity) == [false, false, true])
        let start = try #require(playlist.segments[0].programDateTime)
        #expect(playlist.segments[1].programDateTime == start.addingTimeInterval(4))
        #expect(playlist.segments[2].programDateTime == nil)
    }

    @Test("image playlists with tiles")
    func tiles() throws {
        let playlist = try media(
            """
            #EXTM3U
            #EXT-X-TARGETDURATION:60
            #EXT-X-IMAGES-ONLY
            #EXT-X-TILES:RESOLUTION=160x90,LAYOUT=5x4,DURATION=3.0
            #EXTINF:60,
            sheet-1.jpg
            #EXTINF:30,
            sheet-2.jpg
            #EXT-X-ENDLIST
            """)
        #expect(playlist.imagesOnly)
        #expect(
            playlist.segments[0].tiles
                == HLSTiles(resolution: PixelSize(width: 160, height: 90), columns: 5, rows: 4, duration: 3))
        #expect(playlist.segments[1].tiles == nil)
    }

    @Test("a media playlist without EXT-X-TARGETDURATION is read, its target the longest segment rounded up")
    func missingTargetDuration() throws {
        guard
            case .media(let media) = try HLSPlaylistParser().parse(
                Data("#EXTM3U\n#EXTINF:4.2,\na.ts\n#EXTINF:3,\nb.ts\n#EXT-X-ENDLIST\n".utf8),
                url: URL(string: "https://a/b.m3u8")!)
        else {
            Issue.record("not a media playlist")
            return
        }
        #expect(media.targetDurationMissing && media.targetDuration == 5 && media.segments.count == 2)
    }

    @Test(
        "errors carry the line",
        arguments: [
            ("WEBVTT\n", 1, HLSParseError.Kind.notAPlaylist),
            ("", 1, .notAPlaylist),
            ("#EXTM3U\n#EXT-X-TARGETDURATION:4\nseg.ts\n", 3, .missing),
            ("#EXTM3U\n#EXT-X-TARGETDURATION:4\n#EXTINF:abc,\nseg.ts\n", 3, .malformed),
            ("#EXTM3U\n#EXT-X-STREAM-INF:BANDWIDTH=1\nv.m3u8\n#EXTINF:4,\n", 4, .malformed),
            ("#EXTM3U\n#EXT-X-STREAM-INF:BANDWIDTH=1,CODECS=\"avc1\nv.m3u8\n", 2, .malformed),
            ("#EXTM3U\n#EXT-X-STREAM-INF:RESOLUTION=1x1\nv.m3u8\n", 3, .missing),
            ("#EXTM3U\n#EXT-X-STREAM-INF:BANDWIDTH=1,RESOLUTION=big\nv.m3u8\n", 3, .malformed),
            ("#EXTM3U\n#EXT-X-TARGETDURATION:4\n#EXT-X-PLAYLIST-TYPE:LIVE\n", 3, .malformed),
            ("#EXTM3U\n#EXT-X-TARGETDURATION:4\n#EXT-X-PROGRAM-DATE-TIME:yesterday\n", 3, .malformed),
        ])
    func errors(_ text: String, _ line: Int, _ kind: HLSParseError.Kind) {
        let error = hlsError(text)
        #expect(error?.kind == kind, "\(String(describing: error))")
        #expect(error?.line == line, "\(String(describing: error))")
    }
}
