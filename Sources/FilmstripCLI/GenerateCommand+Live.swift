import ArgumentParser
import Filmstrip
import Foundation

#if canImport(Glibc)
    import Glibc
#endif

extension GenerateCommand {
    /// `generate --live`: publishes until the stream ends (exit 0) or SIGTERM (exit 143, after what is complete).
    func runLive() async throws {
        var configuration = LivePreviewConfiguration()
        configuration.preview = try generation.previewOptions()
        configuration.preview.interval = generation.interval ?? 2
        configuration.preview.loading = network.applied(to: configuration.preview.loading)
        configuration.window = window
        configuration.sheetSpan = sheetSpan
        configuration.fromStart = fromStart
        let directory = URL(fileURLWithPath: output, isDirectory: true).standardizedFileURL
        let generator = LivePreviewTrackGenerator(
            source: resourceURL(video), directory: directory, configuration: configuration)
        for note in generation.notes(hls: configuration.preview.formats.contains(.hls)) { printError(note) }
        let json = self.json
        signal(SIGTERM, SIG_IGN)
        let run = Task {
            try await generator.run { update in
                // Unbuffered, one write per line: a reader sees each publication as it happens.
                FileHandle.standardOutput.write(Data((Self.describe(update, json: json) + "\n").utf8))
            }
        }
        let terminate = DispatchSource.makeSignalSource(signal: SIGTERM, queue: .global())
        terminate.setEventHandler { run.cancel() }
        terminate.resume()
        do {
            try await run.value
        } catch {
            throw fail(error)
        }
        terminate.cancel()
        if run.isCancelled {
            printError("stopped by SIGTERM; run again on \(directory.path) to go on")
            throw ExitCode(128 + SIGTERM)
        }
    }

    static func describe(_ update: LivePreviewUpdate, json: Bool) -> String {
        let sheets = update.published.map { $0.name ?? "gap-\($0.number)" }
        if json {
            return JSON.object([
                ("event", .string(update.ended ? "end" : "publish")),
                ("sheets", .array(sheets.map(JSON.string))),
                ("removed", .array(update.removed.map(JSON.string))),
                ("window", .array([.double(update.window.lowerBound), .double(update.window.upperBound)])),
                ("lag", .double((update.lag * 1000).rounded() / 1000)),
                ("ended", .bool(update.ended)),
            ]).text
        }
        let window = String(format: "%.3f–%.3f s", update.window.lowerBound, update.window.upperBound)
        if update.ended, sheets.isEmpty { return "the stream ended: the tracks are VOD tracks (\(window))" }
        return "published \(sheets.joined(separator: ", ")): window \(window), "
            + String(format: "%.1f s behind the live edge", update.lag) + (update.ended ? "; the stream ended" : "")
    }
}
