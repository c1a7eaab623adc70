import ArgumentParser
import Filmstrip
import Foundation
import Synchronization

struct PlayCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "play",
        abstract: "Play a video headless and print the player's events.",
        discussion: """
            Prints one line per event: state changes, statistics once a second, and errors (one JSON object per \
            line with --json). Exits 0 when playback ends or after --duration, 1 after a fatal error.

            Example:
              filmstrip play movie.mp4 --autoplay --rate 2 --seek 30@1 --duration 5 --json
            """
    )

    @Argument(help: "Path or URL of the video (a file or a progressive MP4 over http).")
    var video: String

    @Flag(help: "Start playing as soon as the content is ready (otherwise it waits paused).")
    var autoplay = false

    @Option(help: "Playback rate.")
    var rate: Double?

    @Option(
        help: "Seek to T seconds, or to T when AT seconds have passed (T@AT). Repeatable.",
        transform: { text in
            let parts = text.split(separator: "@").map { Double($0) }
            guard (1...2).contains(parts.count), parts.allSatisfy({ $0 != nil }) else {
                throw ValidationError("--seek takes T or T@AT (seconds)")
            }
            return SeekRequest(target: parts[0]!, at: parts.count == 2 ? parts[1]! : 0)
        })
    var seek: [SeekRequest] = []

    @Option(help: "Stop after this many seconds.")
    var duration: Double?

    @Flag(help: "Print one JSON object per line.")
    var json = false

    struct SeekRequest {
        var target: Double
        var at: Double
    }

    func run() async throws {
        let started = Date()
        let output = EventPrinter(json: json, started: started)
        let player = Player()
        let fatal = Mutex(false)
        player.onState = { previous, state in
            output.emit(
                "state", [("from", .string(previous.kind.rawValue)), ("to", .string(state.kind.rawValue))],
                text: "\(previous.kind.rawValue) -> \(state.kind.rawValue)")
        }
        player.onError = { error in
            if error.severity == .fatal { fatal.withLock { $0 = true } }
            output.emit(
                "error",
                [
                    ("severity", .string(error.severity.rawValue)), ("type", .string(error.type.rawValue)),
                    ("message", .string(error.message)),
                ],
                text: "\(error.severity.rawValue) \(error.type.rawValue): \(error.message)")
        }
        player.onStats = { stats in
            output.emit(
                "stats",
                [
                    ("state", .string(stats.state.rawValue)), ("position", .double(round3(stats.position))),
                    ("duration", .double(round3(stats.duration))), ("rate", .double(stats.playbackRate)),
                    ("decoded_frames", .int(stats.decodedFrames)), ("presented_frames", .int(stats.presentedFrames)),
                    ("dropped_frames", .int(stats.droppedFrames)), ("bytes_read", .int(stats.bytesRead)),
                    ("startup_time", stats.startupTime.map { .double(round3($0)) } ?? .null),
                ],
                text: String(
                    format: "position %.3f / %.3f s, rate %g, %d frames shown, %d dropped",
                    stats.position, stats.duration, stats.playbackRate, stats.presentedFrames, stats.droppedFrames))
        }
        if let rate { player.playbackRate = rate }
        player.load(config: PlayerConfiguration(with: resourceURL(video)))
        player.open(autoplay: autoplay)
        var seeks = seek.sorted { $0.at < $1.at }
        while true {
            let elapsed = Date().timeIntervalSince(started)
            while let next = seeks.first, next.at <= elapsed {
                seeks.removeFirst()
                player.seek(next.target)
            }
            if fatal.withLock({ $0 }) || player.state.kind == .error {
                player.stop()
                throw ExitCode(1)
            }
            if player.state.kind == .ended, seeks.isEmpty { return }
            if let duration, elapsed >= duration {
                player.stop()
                try await Task.sleep(nanoseconds: 50_000_000)
                return
            }
            try await Task.sleep(nanoseconds: 10_000_000)
        }
    }
}

private func round3(_ value: Double) -> Double { (value * 1000).rounded() / 1000 }

/// Prints events from the player's thread, one line each.
final class EventPrinter: Sendable {
    let json: Bool
    let started: Date
    private let lock = Mutex(())

    init(json: Bool, started: Date) {
        self.json = json
        self.started = started
    }

    func emit(_ event: String, _ fields: [(String, JSON)], text: String) {
        let t = (Date().timeIntervalSince(started) * 1000).rounded() / 1000
        let line =
            json
            ? JSON.object([("t", .double(t)), ("event", .string(event))] + fields).text
            : String(format: "%8.3f  %@  %@", t, event.padding(toLength: 5, withPad: " ", startingAt: 0), text)
        // Unbuffered, so each event is on stdout as it happens.
        lock.withLock { _ in FileHandle.standardOutput.write(Data((line + "\n").utf8)) }
    }
}
