import Filmstrip
import Foundation

enum ParseBenchmark {
    static func run(_ fixture: BenchFixture) throws {
        let bytes = Array(fixture.trackText.utf8)
        let parser = WebVTTThumbnailParser()
        var times: [Double] = []
        var cues = 0
        for _ in 0..<60 {
            let start = now()
            let track = try parser.parse(bytes, trackURL: fixture.trackFile)
            times.append(Double(now() - start) / 1e9)
            cues = track.cues.count
        }
        let seconds = median(times)
        let megabytes = Double(bytes.count) / 1e6
        print("WebVTT parse: \(cues) cues, \(format(megabytes, 2)) MB")
        print(
            "  Filmstrip     \(format(seconds * 1000, 2)) ms/parse  \(format(megabytes / seconds)) MB/s  \(format(Double(cues) / seconds / 1e6, 2)) M cues/s"
        )
        let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("webvtt_py_parse.py").path
        do {
            let output = try Benchmarks.run("/usr/bin/env", ["python3", script, fixture.trackFile.path, "5"])
            let fields = output.split(separator: " ")
            guard let python = Double(fields.first ?? ""),
                let pythonCues = Int(fields.last?.trimmingCharacters(in: .whitespacesAndNewlines) ?? "")
            else {
                throw BenchError("unexpected output from webvtt-py: \(output)")
            }
            print(
                "  webvtt-py     \(format(python * 1000, 1)) ms/parse  \(format(megabytes / python, 2)) MB/s  (\(pythonCues) cues)"
            )
            print("  ratio         \(format(python / seconds, 0))x faster than webvtt-py")
        } catch {
            print("  webvtt-py     not run: \(error) (make bench installs it)")
        }
        print("")
    }
}

/// Namespaced access to the top-level `run` helper from inside types that define their own `run`.
enum Benchmarks {
    static func run(_ executable: String, _ arguments: [String]) throws -> String {
        try FilmstripBench.run(executable, arguments)
    }
}
