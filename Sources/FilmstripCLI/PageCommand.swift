import ArgumentParser
import Filmstrip
import FilmstripServer
import Foundation

struct PageCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "page",
        abstract: "Write a self-contained watch page with scrub previews for one video, to open from disk.",
        discussion: """
            Generates the video's preview track into DIR/previews/, copies the video into DIR and writes \
            DIR/index.html with the cues inlined: open it in a browser straight from disk (file://), no server \
            needed, no request beyond DIR. `filmstrip serve` does the same for whole folders.

            Example:
              filmstrip page movie.mp4 --output movie-page && xdg-open movie-page/index.html
            """
    )

    @Argument(help: "Path of the video.")
    var video: String

    @Option(name: .shortAndLong, help: "Directory to write the page, the video and its previews to.")
    var output: String

    @OptionGroup var previews: OnDemandPreviewOptions

    func run() async throws {
        let options = previews.applied(to: ServerConfiguration(libraries: []).trackOptions)
        do {
            let result = try await StandalonePage.write(
                video: URL(fileURLWithPath: video), to: URL(fileURLWithPath: output, isDirectory: true),
                options: options)
            let previews = result.thumbnails == 1 ? "1 preview" : "\(result.thumbnails) previews"
            let sheets = result.sheets.count == 1 ? "1 sheet" : "\(result.sheets.count) sheets"
            print("wrote \(result.page.path) (\(previews) on \(sheets))")
        } catch {
            throw fail(error)
        }
    }
}
