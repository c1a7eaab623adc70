import FilmstripFormats
import Foundation
import Testing

/// Hostile sizes answer within their bound or fail with a clear error, before memory follows the input.
@Suite("Bounds: huge playlists, tracks and MPDs")
struct BoundsTests {
    static let url = URL(string: "https://cdn.example.com/v/main.m3u8")!

    @Test("a 5-million-segment playlist stops at the entry bound with a tooLarge error on the line past it")
    func fiveMillionSegments() async throws {
        let url = Self.url
        let segment = Data("#EXTINF:1,\ns.ts\n".utf8)
        let refused = try await onOwnThread { () -> HLSParseError? in
            var text = Data("#EXTM3U\n#EXT-X-TARGETDURATION:1\n".utf8)
            text.reserveCapacity(text.count + segment.count * 5_000_000)
            for _ in 0..<5_000_000 { text.append(segment) }
            do {
                _ = try HLSPlaylistParser().parse(text, url: url)
                return nil
            } catch let error as HLSParseError {
                return error
            }
        }
        if let error = refused {
            #expect(error.kind == .tooLarge)
            #expect(error.line == 2 + 2 * 1_000_001, "the line of segment 1,000,001's URI")
            #expect(error.message.contains("1000000"))
        } else {
            Issue.record("5,000,000 segments were accepted")
        }
        // At the bound it is read.
        let small = HLSPlaylistParser(maximumEntries: 1_000)
        var exact = Data("#EXTM3U\n#EXT-X-TARGETDURATION:1\n".utf8)
        for _ in 0..<1_000 { exact.append(segment) }
        guard case .media(let media) = try small.parse(exact, url: url) else { throw CancellationError() }
        #expect(media.segments.count == 1_000)
        #expect(throws: HLSParseError.self) { try small.parse(exact + segment, url: url) }
    }

    /// What reading a million cues, then one more in each mode, gave.
    struct MillionCues: Sendable {
        var cuesRead: Int
        var refusals: [WebVTTThumbnailParser.Mode: WebVTTDiagnostic?]
    }

    @Test("a track of 1,000,001 cues is refused in both modes; one of 1,000,000 is read")
    func millionCues() async throws {
        let url = Self.url
        let outcome = try await onOwnThread { () throws -> MillionCues in
            var text = "WEBVTT\n\n"
            text.reserveCapacity(48 * 1_000_001)
            func cue(_ k: Int) -> String {
                let s = k % 60, m = (k / 60) % 60, h = k / 3600
                let t = String(format: "%02d:%02d:%02d.000", h, m, s)
                let e = String(format: "%02d:%02d:%02d.500", h, m, s)
                return "\(t) --> \(e)\na.jpg\n\n"
            }
            for k in 0..<1_000_000 { text += cue(k) }
            let bytes = Array(text.utf8)
            var outcome = MillionCues(
                cuesRead: try WebVTTThumbnailParser().parse(bytes, trackURL: url).cues.count, refusals: [:])
            let more = bytes + Array(cue(1_000_000).utf8)
            for mode in [WebVTTThumbnailParser.Mode.strict, .lenient] {
                do {
                    _ = try WebVTTThumbnailParser(mode: mode).parse(more, trackURL: url)
                    outcome.refusals[mode] = .some(nil)
                } catch let error as WebVTTParseError {
                    outcome.refusals[mode] = error.diagnostic
                }
            }
            return outcome
        }
        #expect(outcome.cuesRead == 1_000_000)
        for mode in [WebVTTThumbnailParser.Mode.strict, .lenient] {
            guard let diagnostic = outcome.refusals[mode] ?? nil else {
                Issue.record("1,000,001 cues were accepted in \(mode) mode")
                continue
            }
            #expect(diagnostic.kind == .tooManyCues)
            #expect(diagnostic.line == 3 + 3 * 1_000_000)
        }
    }

    /// How the parsers answered an MPD of 100,000 periods.
    struct HundredThousandPeriods: Sendable {
        var periods: Int
        var lastStart: Double?
        var refusedByEntries: Bool
        var refusedByBytes: Bool
    }

    @Test("an MPD of 100,000 periods is read within its entry bound, or refused by a lower one")
    func hundredThousandPeriods() async throws {
        let url = Self.url
        let outcome = try await onOwnThread { () throws -> HundredThousandPeriods in
            var text = #"<MPD xmlns="urn:mpeg:dash:schema:mpd:2011" type="static" "#
            text += #"mediaPresentationDuration="PT100000S">"#
            for k in 0..<100_000 {
                text += #"<Period id="\#(k)" duration="PT1S"><AdaptationSet><SegmentTemplate media="$Number$.m4s" "#
                text += #"duration="1"/><Representation id="v" bandwidth="1"/></AdaptationSet></Period>"#
            }
            text += "</MPD>"
            let data = Data(text.utf8)
            let presentation = try DASHManifestParser().parse(data, url: url)
            func refused(_ limits: DASHManifestParser.Limits) -> Bool {
                do {
                    _ = try DASHManifestParser(limits: limits).parse(data, url: url)
                    return false
                } catch {
                    return error.kind == .tooLarge
                }
            }
            return HundredThousandPeriods(
                periods: presentation.periods.count, lastStart: presentation.periods.last?.start,
                refusedByEntries: refused(.init(maximumBytes: 16 << 20, maximumEntries: 100_000)),
                refusedByBytes: refused(.init(maximumBytes: 1 << 20, maximumEntries: 1_000_000)))
        }
        #expect(outcome.periods == 100_000)
        #expect(outcome.lastStart == 99_999)
        #expect(outcome.refusedByEntries)
        #expect(outcome.refusedByBytes)
    }

    @Test("a tiled track past its tile bound keeps the first tiles and says so with an error finding")
    func tileBound() {
        let sheet = ThumbnailTrack.Sheet(
            url: URL(string: "https://cdn.example.com/s.jpg")!, byteRange: nil, start: 0, duration: 1_000,
            layout: Presentation.TileLayout(columns: 100, rows: 100), tileDuration: 0.1)
        let track = ThumbnailTrack(sheets: [sheet, sheet], sourceURL: Self.url, format: .hls, maximumCues: 50)
        #expect(track.cues.count == 50)
        #expect(track.findings.contains { $0.severity == .error && $0.message.contains("more than 50 tiles") })
        let whole = ThumbnailTrack(sheets: [sheet], sourceURL: Self.url, format: .hls)
        #expect(whole.cues.count == 10_000 && whole.findings.isEmpty)
    }

    @Test("a lenient parse of 20,000 broken cues keeps the first 10,000 diagnostics")
    func diagnosticsBound() throws {
        let text = "WEBVTT\n\n" + String(repeating: "00:00.000 --> 00:01.000\n\n", count: 20_000)
        let track = try WebVTTThumbnailParser(mode: .lenient).parse(text, trackURL: Self.url)
        #expect(track.cues.isEmpty)
        #expect(track.diagnostics.count == 10_000)
        #expect(track.diagnostics.first?.line == 3)
    }
}
