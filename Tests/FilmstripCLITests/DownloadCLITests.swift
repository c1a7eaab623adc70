import FilmstripTesting
import Foundation
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// `filmstrip download` on a stream with audio and an image track attached by `generate --attach`, served over the
/// loopback server: the bytes fetched are the chosen renditions', the thumbnails and the manifests; with the server
/// stopped the download plays, seeks, and answers scrub previews from its stored track. Killed with SIGKILL at ten
/// random instants and run again each time, it never fetches a verified file twice and ends byte-identical to an
/// uninterrupted download.
@Suite("filmstrip download", .serialized)
struct DownloadCLITests {
    /// Serves hlsVariants with an image track attached (`/att/master.m3u8`).
    static func serveWithPreviews(on server: LoopbackServer, in directory: TemporaryDirectory) async throws -> URL {
        let url = try StreamLayouts.serve(.hlsVariants, on: server)
        let out = directory.file("attached")
        let made = try await filmstrip(
            "generate", url.absoluteString, "--output", out.path, "--interval", "1", "--mode", "accurate",
            "--attach")
        #expect(made.status == 0, "\(made.stderr)")
        try StreamLayouts.serveDirectory(out, on: server, prefix: "/att")
        server.forgetRequests()
        return server.url("/att/master.m3u8")
    }

    @Test("renditions, audio and previews: only their bytes fetched; offline it plays, seeks and scrubs its previews")
    func offline() async throws {
        let server = try LoopbackServer()
        defer { server.stop() }
        let directory = try TemporaryDirectory(prefix: "filmstrip-cli-download")
        defer { directory.remove() }
        let url = try await Self.serveWithPreviews(on: server, in: directory)
        let target = directory.file("film")
        let result = try await filmstrip(
            "download", url.absoluteString, "--output", target.path, "--max-height", "200", "--audio", "en", "--json")
        #expect(result.status == 0, "\(result.stderr)")
        let json = try result.json()
        #expect(json["previews"] as? String == target.appendingPathComponent("previews/thumbnails.vtt").path)
        let paths = server.requests.map(\.path)
        #expect(Set(paths).count == paths.count, "a file fetched twice: \(paths)")
        let media = paths.filter { !$0.hasSuffix(".m3u8") }
        #expect(
            media.allSatisfy {
                $0.hasPrefix("/hlsVariants/v160/") || $0.hasPrefix("/hlsVariants/eng/") || $0.hasPrefix("/att/")
            })
        #expect(media.contains { $0.hasPrefix("/att/") } && media.contains { $0.hasPrefix("/hlsVariants/eng/") })
        let sent = media.reduce(0) { $0 + server.bytesSent($1) }
        #expect(sent == json["bytes"] as? Int, "sent \(sent): \(json)")
        server.stop()

        let play = try await filmstrip(
            "play", target.path, "--autoplay", "--rate", "4", "--seek", "7@0.5", "--json")
        #expect(play.status == 0 && play.stdout.contains(#""state": "ended""#), "\(play.stderr)")
        let answers = try await PreviewsCLITests().previews(
            [3.5, 8.2].enumerated().map { i, at in
                #"{"id": \#(i), "source": "\#(target.appendingPathComponent("master.m3u8").path)", "at": \#(at), "#
                    + #""width": 160, "height": 120, "output": "\#(directory.file("p\(i).bgra").path)"}"#
            }, in: directory)
        for (answer, at) in zip(answers, [3.5, 8.2]) {
            #expect(answer["origin"] as? String == "sidecar", "\(answer)")
            #expect(answer["start"] as? Double == at.rounded(.down), "\(answer)")
            let shown = try PreviewsCLITests().frame(
                ofBGRA: try #require(answer["output"] as? String), width: try #require(answer["width"] as? Int),
                height: try #require(answer["height"] as? Int))
            #expect(
                shown.map { abs($0 - Int(at.rounded(.down)) * 25) <= 1 } == true, "at \(at): frame \(shown ?? -1)")
        }
    }

    @Test("killed with SIGKILL at 10 random instants: no verified file fetched again, the end byte-identical")
    func kills() async throws {
        let server = try LoopbackServer()
        defer { server.stop() }
        let directory = try TemporaryDirectory(prefix: "filmstrip-cli-download-kill")
        defer { directory.remove() }
        let url = try await Self.serveWithPreviews(on: server, in: directory)
        // 50 ms per answer and one file at a time: a run stores at most one file in 40 ms.
        server.setLatency(0.05)
        let whole = directory.file("whole")
        let arguments = ["download", url.absoluteString, "--audio", "en,fr", "--concurrency", "1", "--output"]
        let reference = try await filmstripArguments(arguments + [whole.path])
        #expect(reference.status == 0, "\(reference.stderr)")
        let binary = try cliExecutable().path
        let resumed = directory.file("resumed")
        var random = SeededGenerator(seed: 0xD0C5)
        var killedMidway = 0
        for round in 0..<10 {
            let verified = Self.journaled(resumed)
            server.forgetRequests()
            // Half the kills at a random instant from the start (planning, the first files), half at a random
            // instant within 40 ms of a file being journaled (the next file in flight or being written).
            let instant =
                round % 2 == 0
                ? KillInstant.after(Double.random(in: 0...0.3, using: &random))
                : .afterJournaled(resumed, Double.random(in: 0...0.04, using: &random))
            let ended = await onThreads(1, threads: 1) { _ in
                Self.runAndKill(binary, arguments + [resumed.path], at: instant)
            }[0]
            if !ended { killedMidway += 1 }
            // A request is logged on arrival, so one made before the kill and never answered may be logged now: it
            // names a file that was not verified by it.
            let fetched = Set(server.requests.map { server.url($0.path).absoluteString })
            let again = verified.intersection(fetched)
            #expect(again.isEmpty, "verified files fetched again: \(again)")
        }
        let last = try await filmstripArguments(arguments + [resumed.path])
        #expect(last.status == 0, "\(last.stderr)")
        #expect(killedMidway == 10, "only \(killedMidway) runs were killed before they ended")
        // Every file but the journal (whose lines are in arrival order) is the uninterrupted download's.
        let files = try FileManager.default.subpathsOfDirectory(atPath: whole.path).filter {
            $0 != "journal" && !Self.isDirectory(whole.appendingPathComponent($0))
        }
        #expect(files.count > 15)
        for file in files {
            let a = try Data(contentsOf: whole.appendingPathComponent(file))
            let b = try? Data(contentsOf: resumed.appendingPathComponent(file))
            #expect(a == b, "\(file) differs")
        }
        let leftovers = try FileManager.default.subpathsOfDirectory(atPath: resumed.path).filter {
            $0.hasSuffix(".part")
        }
        #expect(leftovers.isEmpty)
    }

    enum KillInstant: Sendable {
        case after(Double)
        /// `delay` seconds after the journal at `download` has one more line than when the run started.
        case afterJournaled(URL, Double)
    }

    static func isDirectory(_ url: URL) -> Bool {
        var flag: ObjCBool = false
        return FileManager.default.fileExists(atPath: url.path, isDirectory: &flag) && flag.boolValue
    }

    /// Where each file the download's journal holds came from (its URL; these streams have no byte ranges).
    static func journaled(_ download: URL) -> Set<String> {
        Set(
            journalLines(download).compactMap { line in
                let fields = line.split(separator: " ", maxSplits: 3)
                return fields.count == 4 ? String(fields[3]) : nil
            })
    }

    static func journalLines(_ download: URL) -> [Substring] {
        guard let text = try? String(contentsOf: download.appendingPathComponent("journal"), encoding: .utf8) else {
            return []
        }
        return Array(text.split(separator: "\n").dropFirst())
    }

    /// Runs the command and kills it with SIGKILL at `instant`; whether it ended on its own first.
    static func runAndKill(_ binary: String, _ arguments: [String], at instant: KillInstant) -> Bool {
        var lines = 0
        if case .afterJournaled(let download, _) = instant { lines = journalLines(download).count }
        let pid = spawnQuietly(binary, arguments)
        guard pid > 0 else { return true }
        let now = { DispatchTime.now().uptimeNanoseconds }
        var deadline: UInt64? = nil
        if case .after(let delay) = instant { deadline = now() + UInt64(delay * 1e9) }
        var status: Int32 = 0
        while deadline.map({ now() < $0 }) ?? true {
            if waitpid(pid, &status, WNOHANG) == pid { return true }
            if deadline == nil, case .afterJournaled(let download, let delay) = instant,
                journalLines(download).count > lines
            {
                deadline = now() + UInt64(delay * 1e9)
            }
            pauseWatching(microseconds: 500)
        }
        kill(pid, SIGKILL)
        _ = waitpid(pid, &status, 0)
        return false
    }
}
