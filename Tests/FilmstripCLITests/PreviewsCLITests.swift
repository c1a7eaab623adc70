import FilmstripTesting
import Foundation
import Testing

@Suite("filmstrip previews: JSON lines in, BGRA previews out")
struct PreviewsCLITests {
    /// Runs `filmstrip previews` with `lines` on standard input; the answers, one object per line.
    func previews(_ lines: [String], in directory: TemporaryDirectory) async throws -> [[String: Any]] {
        let input = directory.file("requests")
        try Data((lines.joined(separator: "\n") + "\n").utf8).write(to: input)
        let answers = directory.file("answers").path
        let process = Process()
        process.executableURL = try cliExecutable()
        process.arguments = ["previews", "--answers", answers]
        process.standardInput = try FileHandle(forReadingFrom: input)
        process.standardError = FileHandle.nullDevice
        let status: Int32 = try await withCheckedThrowingContinuation { continuation in
            process.terminationHandler = { continuation.resume(returning: $0.terminationStatus) }
            do { try process.run() } catch { continuation.resume(throwing: error) }
        }
        #expect(status == 0)
        return try String(contentsOfFile: answers, encoding: .utf8).split(separator: "\n").map {
            try #require(try JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any])
        }
    }

    /// The counter frame a BGRA preview shows (its middle pixel).
    func frame(ofBGRA path: String, width: Int, height: Int) throws -> Int? {
        let bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
        #expect(bytes.count == width * height * 4)
        let i = (height / 2 * width + width / 2) * 4
        return MediaFixtures.frameNumber(r: Double(bytes[i + 2]), g: Double(bytes[i + 1]), b: Double(bytes[i]))
    }

    @Test("a file's keyframes, a sidecar track beside it, bad lines and missing sources answered, input's end ends it")
    func answers() async throws {
        let directory = try TemporaryDirectory(prefix: "filmstrip-cli-previews")
        defer { directory.remove() }
        let video = directory.file("counter.mp4")
        try FileManager.default.copyItem(at: try MediaFixtures.counter(), to: video)
        let output = directory.file("p.bgra").path
        func request(_ id: Int, _ source: String, _ at: Double, _ out: String) -> String {
            #"{"id": \#(id), "source": "\#(source)", "at": \#(at), "width": 160, "height": 160, "output": "\#(out)"}"#
        }
        let first = try await previews(
            [
                request(1, video.path, 5.2, output), "not json", "",
                #"{"id": 3, "source": "x.mp4", "at": 1e999, "width": 1, "height": 1, "output": "o"}"#,
                request(4, directory.file("missing.mp4").path, 1, directory.file("q.bgra").path),
            ], in: directory)
        #expect(first.count == 4)
        // The keyframe at or before 5.2 s (one every 2 s), fitted into 160x160 keeping 4:3.
        #expect(first[0]["id"] as? Int == 1 && first[0]["start"] as? Double == 4)
        #expect(first[0]["engine"] as? String == "frames" && first[0]["origin"] as? String == "file-index")
        #expect(
            first[0]["width"] as? Int == 160 && first[0]["height"] as? Int == 120 && first[0]["stride"] as? Int == 640)
        #expect(try frame(ofBGRA: output, width: 160, height: 120) == 100)
        #expect(first[1]["id"] is NSNull && (first[1]["error"] as? String)?.contains("not a preview request") == true)
        #expect(first[2]["id"] is NSNull && (first[2]["error"] as? String)?.contains("not a preview request") == true)
        #expect(first[3]["id"] as? Int == 4 && first[3]["error"] is String)
        // A sidecar NAME.vtt beside the file is its preview track.
        let track = directory.file("track").path
        let made = try await filmstrip(
            "generate", video.path, "--output", track, "--interval", "1", "--width", "80", "--formats", "vtt", "--mode",
            "accurate")
        #expect(made.status == 0, "\(made.stderr)")
        let vtt = try String(contentsOfFile: track + "/thumbnails.vtt", encoding: .utf8)
            .replacingOccurrences(of: "sprite-", with: "track/sprite-")
        try vtt.write(to: directory.file("counter.vtt"), atomically: true, encoding: .utf8)
        let second = try await previews([request(5, video.path, 7.5, output)], in: directory)
        #expect(second.last?["origin"] as? String == "sidecar" && second.last?["engine"] as? String == "tracks")
        #expect(second.last?["start"] as? Double == 7 && second.last?["width"] as? Int == 160)
        let shown = try #require(try frame(ofBGRA: output, width: 160, height: 120))
        #expect(abs(shown - 175) <= 1, "the sidecar's image of 7 s shows frame \(shown)")
    }

    @Test("a request that waits behind a newer one for the same output is superseded")
    func superseded() async throws {
        let server = try LoopbackServer()
        defer { server.stop() }
        server.serve("/counter.mp4", body: [UInt8](try Data(contentsOf: try MediaFixtures.counter())))
        // Every answer waits 0.3 s: the later requests are read while the first is being answered.
        server.fail("/counter.mp4", with: Array(repeating: .delay(0.3), count: 20))
        let directory = try TemporaryDirectory(prefix: "filmstrip-cli-previews")
        defer { directory.remove() }
        let output = directory.file("p.bgra").path
        let url = server.url("counter.mp4").absoluteString
        let lines = (1...3).map { id in
            #"{"id": \#(id), "source": "\#(url)", "at": \#(2 * id + 1), "width": 80, "height": 60, "output": "\#(output)"}"#
        }
        let answers = try await previews(lines, in: directory)
        #expect(answers.map { $0["id"] as? Int } == [1, 2, 3])
        #expect(answers[1]["superseded"] as? Bool == true)
        #expect(answers[2]["start"] as? Double == 6 && answers[2]["engine"] as? String == "frames")
        #expect(try frame(ofBGRA: output, width: 80, height: 60) == 150)
    }
}
