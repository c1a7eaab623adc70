import FilmstripFormats
import Foundation
import Testing

/// The WebVTT file-parsing cases of the web-platform-tests (see Conformance/webvtt-wpt/README.md): lenient parsing
/// gives the cues a browser gives; strict parsing fails exactly where a browser drops something.
@Suite("WebVTT conformance (web-platform-tests)")
struct WebVTTConformanceTests {
    struct Case: Decodable, Sendable, CustomStringConvertible {
        struct Cue: Decodable, Sendable {
            var id: String?
            var start: Double
            var end: Double
        }
        var name: String
        var vtt: String
        var cues: [Cue]
        var valid: Bool
        var description: String { name }
    }

    static let cases: [Case] = {
        let file = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
            .appendingPathComponent("Conformance/webvtt-wpt/cases.json")
        guard let data = try? Data(contentsOf: file), let cases = try? JSONDecoder().decode([Case].self, from: data)
        else { return [] }
        return cases
    }()

    static let url = URL(string: "https://example.com/track.vtt")!

    @Test("the suite is present")
    func present() {
        #expect(Self.cases.count >= 20)
    }

    @Test("lenient parsing gives a browser's cues; a file a browser rejects fails", arguments: cases)
    func lenient(_ testCase: Case) {
        let parser = WebVTTThumbnailParser(mode: .lenient)
        let result = Result { try parser.parse(Array(testCase.vtt.utf8), trackURL: Self.url) }
        guard testCase.valid else {
            #expect(throws: (any Error).self) { try result.get() }
            return
        }
        guard case .success(let track) = result else {
            Issue.record("\(testCase.name): a browser accepts the file, but: \(result)")
            return
        }
        let ours = track.cues.map { [Double($0.startMilliseconds) / 1000, Double($0.endMilliseconds) / 1000] }
        let theirs = testCase.cues.map { [$0.start, $0.end] }
        #expect(ours == theirs, "\(testCase.name)")
        for (cue, expected) in zip(track.cues, testCase.cues) where expected.id != nil {
            #expect(cue.identifier == expected.id, "\(testCase.name)")
        }
    }

    @Test("strict parsing fails exactly where a browser drops something", arguments: cases)
    func strict(_ testCase: Case) {
        // Timing lines after the signature line that a browser did not turn into cues.
        let lines = testCase.vtt.split(omittingEmptySubsequences: false) { $0 == "\n" || $0 == "\r" || $0 == "\r\n" }
        let timingLines = lines.dropFirst().filter { $0.contains("-->") }.count
        let dropped = !testCase.valid || timingLines > testCase.cues.count
        let result = Result {
            try WebVTTThumbnailParser(mode: .strict).parse(Array(testCase.vtt.utf8), trackURL: Self.url)
        }
        if dropped {
            #expect(throws: (any Error).self, "\(testCase.name): a browser drops something here") { try result.get() }
        } else {
            guard case .success(let track) = result else {
                Issue.record("\(testCase.name): a browser drops nothing, but: \(result)")
                return
            }
            #expect(track.cues.count == testCase.cues.count, "\(testCase.name)")
        }
    }
}
