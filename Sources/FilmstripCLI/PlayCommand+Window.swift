import ArgumentParser
import Filmstrip
import FilmstripWindow
import Foundation

/// `play --window`: the window, its actions printed as events, and the seek bar's previews.
extension PlayCommand {
    /// Opens the window and makes it the player's video and audio output; a missing display is an error (exit 1),
    /// a missing audio device a warning.
    func openWindow(for player: Player, events: EventPrinter) throws -> WindowOutput {
        let screen: WindowOutput
        do {
            let title = URL(string: video)?.lastPathComponent ?? video
            screen = try WindowOutput(title: "\(title) - Filmstrip")
        } catch let error as WindowError {
            printError("cannot open a window: \(error.message)")
            throw ExitCode(1)
        }
        if let warning = screen.audioWarning { printError("warning: \(warning)") }
        screen.control(player)
        screen.onAction = { action in
            let (name, fields) = Self.describe(action)
            events.emit(
                "window", [("action", .string(name))] + fields,
                text: ([name] + fields.map { "\($0.0) \($0.1.text)" }).joined(separator: " "))
        }
        return screen
    }

    /// Loads the seek bar's previews once the content is known (a failure is a warning: the bar still seeks).
    func loadPreviews(into screen: WindowOutput, for player: Player, events: EventPrinter) {
        let sidecar = thumbnails.map { resourceURL($0) }
        Task {
            do {
                let previews = try await ScrubPreviews.load(for: player, sidecar: sidecar)
                screen.previews = previews
                events.emit(
                    "previews", [("source", .string(previews.source.rawValue))],
                    text: "previews from \(previews.source.rawValue)")
            } catch {
                printError("warning: no previews for the seek bar: \(error)")
            }
        }
    }

    static func describe(_ action: WindowAction) -> (String, [(String, JSON)]) {
        switch action {
        case .play(let playing): ("play", [("playing", .bool(playing))])
        case .seek(let time): ("seek", [("time", .double((time * 1000).rounded() / 1000))])
        case .volume(let volume): ("volume", [("volume", .double(volume))])
        case .mute(let muted): ("mute", [("muted", .bool(muted))])
        case .rate(let rate): ("rate", [("rate", .double(rate))])
        case .audioTrack(let index): ("audio_track", [("index", .int(index))])
        case .overlay(let shown): ("overlay", [("shown", .bool(shown))])
        case .fullscreen(let on): ("fullscreen", [("fullscreen", .bool(on))])
        case .resized(let width, let height): ("resized", [("width", .int(width)), ("height", .int(height))])
        case .preview(let time, let cue):
            (
                "preview",
                [("time", .double((time * 1000).rounded() / 1000)), ("cue", .double((cue * 1000).rounded() / 1000))]
            )
        case .quit: ("quit", [])
        }
    }
}
