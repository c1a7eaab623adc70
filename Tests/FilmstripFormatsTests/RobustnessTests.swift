import FilmstripFormats
import Foundation
import Testing

@Suite("WebVTT thumbnail parser: damaged input")
struct RobustnessTests {
    /// A deterministic generator so a failure can be replayed.
    struct Generator: RandomNumberGenerator {
        var state: UInt64
        mutating func next() -> UInt64 {
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            return state
        }
    }

    @Test("thousands of randomly damaged tracks never crash; lenient mode only fails on the header")
    func mutations() throws {
        var base = "WEBVTT\n\nNOTE x\n\n"
        for k in 0..<40 {
            base += "id\(k)\n" + ts(k * 1000) + " --> " + ts(k * 1000 + 1000) + " align:start\n"
            base += "../s\(k / 10).jpg?x=1#xywh=percent:\(k),0,10,10\n\n"
        }
        let original = Array(base.utf8)
        let alphabet = Array("0123456789:.->#,\r\n \t WEBVTTxywh=%/\u{0}".utf8) + [0xFF, 0xEF, 0xBB, 0xBF, 0xC3]
        var random = Generator(state: 2026)
        for _ in 0..<3000 {
            var bytes = original
            for _ in 0..<Int.random(in: 1...12, using: &random) {
                let i = Int.random(in: 0..<bytes.count, using: &random)
                switch Int.random(in: 0..<4, using: &random) {
                case 0: bytes[i] = alphabet.randomElement(using: &random)!
                case 1: bytes.remove(at: i)
                case 2: bytes.insert(alphabet.randomElement(using: &random)!, at: i)
                default: bytes = Array(bytes.prefix(i))
                }
                if bytes.isEmpty { break }
            }
            let headerIntact = bytes.starts(with: Array("WEBVTT\n".utf8))
            do {
                let track = try WebVTTThumbnailParser(mode: .lenient).parse(bytes, trackURL: remoteTrack)
                // Sorted by start (a cue that ends before it starts is kept, as browsers keep it, and never shown).
                #expect(
                    zip(track.cues, track.cues.dropFirst()).allSatisfy { $0.startMilliseconds <= $1.startMilliseconds })
                #expect(track.cues.allSatisfy { Int($0.imageIndex) < track.images.count })
            } catch {
                #expect(!headerIntact, "lenient parse failed on an intact header: \(error)")
            }
            _ = try? WebVTTThumbnailParser(mode: .strict).parse(bytes, trackURL: remoteTrack)
        }
    }

    @Test("a file of only a BOM, only a header, or binary noise is handled")
    func degenerate() throws {
        #expect(throws: WebVTTParseError.self) {
            _ = try WebVTTThumbnailParser().parse([0xEF, 0xBB, 0xBF], trackURL: remoteTrack)
        }
        #expect(try WebVTTThumbnailParser().parse(Array("WEBVTT".utf8), trackURL: remoteTrack).cues.isEmpty)
        let noise = (0..<4096).map { UInt8(truncatingIfNeeded: $0 &* 131 &+ 7) }
        #expect(throws: WebVTTParseError.self) {
            _ = try WebVTTThumbnailParser(mode: .lenient).parse(noise, trackURL: remoteTrack)
        }
        let track = try WebVTTThumbnailParser(mode: .lenient).parse(
            Array("WEBVTT\n\n".utf8) + noise, trackURL: remoteTrack)
        #expect(track.cues.isEmpty)
    }
}
