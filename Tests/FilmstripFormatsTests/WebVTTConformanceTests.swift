import FilmstripFormats
import Foundation
import Testing

/// The WebVTT file-parsing cases of the web-platform-tests and mozilla/vtt.js's file-layout and cue-time tests (see
/// Conformance/webvtt-wpt/README.md and Conformance/webvtt-vttjs/README.md): lenient parsing gives the cues a browser
/// gives, with their ids as written ("" when a cue has none); strict parsing fails exactly where a browser drops
/// something (a timing line that does not become a cue, or the whole file).
@Suite("WebVTT conformance (web-platform-tests, vtt.js)")
struct WebVTTConformanceTests {
    struct Case: Decodable, Sendable, CustomStringConvertible {
        struct Cue: Decodable, Sendable {
            var id: String?
            var start: Double?
            var end: Double?
        }
        var name: String
        var vtt: String
        var cues: [Cue]
        var valid: Bool
        /// Blocks a browser ignores that are not comments (failed timing lines, stray or late blocks).
        var drops: Int
        var source = ""
        var description: String { "\(source)/\(name)" }

        enum CodingKeys: String, CodingKey { case name, vtt, cues, valid, drops }
    }

    static func load(_ folder: String) -> [Case] {
        let file = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
            .appendingPathComponent("Conformance/\(folder)/cases.json")
        guard let data = try? Data(contentsOf: file), let cases = try? JSONDecoder().decode([Case].self, from: data)
        else { return [] }
        return cases.map {
            var named = $0
            named.source = folder
            return named
        }
    }

    static let cases: [Case] = load("webvtt-wpt") + load("webvtt-vttjs")

    static let url = URL(string: "https://example.com/track.vtt")!

    @Test("both suites are present")
    func present() {
        #expect(Self.load("webvtt-wpt").count == 50)
        #expect(Self.load("webvtt-vttjs").count == 173)
    }

    @Test("lenient parsing gives a browser's cues; a file a browser rejects fails", arguments: cases)
    func lenient(_ testCase: Case) {
        let parser = WebVTTThumbnailParser(mode: .lenient)
        let result = Result { try parser.cues(in: Array(testCase.vtt.utf8)) }
        guard testCase.valid else {
            #expect(throws: (any Error).self) { try result.get() }
            return
        }
        guard case .success(let cues) = result else {
            Issue.record("\(testCase): a browser accepts the file, but: \(result)")
            return
        }
        #expect(cues.count == testCase.cues.count, "\(testCase)")
        for (cue, expected) in zip(cues, testCase.cues) {
            if let start = expected.start { #expect(Double(cue.startMilliseconds) / 1000 == start, "\(testCase)") }
            if let end = expected.end { #expect(Double(cue.endMilliseconds) / 1000 == end, "\(testCase)") }
            if let id = expected.id { #expect(cue.id == id, "\(testCase)") }
        }
        // As thumbnails, the same cues in the same order, less those whose payload is no image reference.
        if let track = try? parser.parse(Array(testCase.vtt.utf8), trackURL: Self.url) {
            let thumbnails = track.cues.map { [$0.startMilliseconds, $0.endMilliseconds] }
            let all = cues.map { [$0.startMilliseconds, $0.endMilliseconds] }
            var rest = all[...]
            for cue in thumbnails {
                guard let at = rest.firstIndex(of: cue) else {
                    Issue.record("\(testCase): a thumbnail cue the browser does not have")
                    break
                }
                rest = rest[(at + 1)...]
            }
        }
    }

    @Test("strict parsing fails exactly where a browser drops something", arguments: cases)
    func strict(_ testCase: Case) {
        let result = Result { try WebVTTThumbnailParser(mode: .strict).cues(in: Array(testCase.vtt.utf8)) }
        if !testCase.valid || testCase.drops > 0 {
            #expect(throws: (any Error).self, "\(testCase): a browser drops something here") { try result.get() }
        } else {
            guard case .success(let cues) = result else {
                Issue.record("\(testCase): a browser drops nothing, but: \(result)")
                return
            }
            #expect(cues.count == testCase.cues.count, "\(testCase)")
        }
    }
}
