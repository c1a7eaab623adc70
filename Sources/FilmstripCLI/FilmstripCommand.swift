import ArgumentParser
import Foundation

@main
struct FilmstripCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "filmstrip",
        abstract: "Preview thumbnails for video: look up and inspect thumbnail tracks, generate them, extract frames.",
        discussion: """
            Exit status: 0 on success, 1 when no thumbnail covers the time (or `inspect --check` finds \
            problems), 2 on bad input (unreadable or malformed track, fetch failure, invalid options).
            """,
        version: filmstripVersion,
        subcommands: [
            ThumbnailCommand.self, InspectCommand.self, GenerateCommand.self, FrameCommand.self, GalleryCommand.self,
            IFramesCommand.self, PlayCommand.self, ServeCommand.self, PageCommand.self, CatalogCommand.self,
            CacheCommand.self, PreviewsCommand.self, DownloadCommand.self,
        ]
    )

    /// Runs the command, mapping usage errors to exit status 2 like every other kind of bad input.
    static func main() async {
        do {
            var command = try parseAsRoot()
            if var asyncCommand = command as? any AsyncParsableCommand {
                try await asyncCommand.run()
            } else {
                try command.run()
            }
        } catch {
            if exitCode(for: error) == .validationFailure {
                FileHandle.standardError.write(Data((fullMessage(for: error) + "\n").utf8))
                Foundation.exit(2)
            }
            exit(withError: error)
        }
    }
}
