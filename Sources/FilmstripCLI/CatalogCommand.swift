import ArgumentParser
import FilmstripCatalog
import Foundation

struct CatalogCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "catalog",
        abstract: "Preview tracks for a whole catalog: an idempotent, resumable, sharded worker for batch engines.",
        discussion: """
            LIST is a text file of paths and http(s) or file URLs (one per line; a line starting with # is a \
            comment; relative paths are relative to the list's folder) or a folder (every video and stream under \
            it, not the segments a playlist lists). Each item's outputs go to DIR/items/KK/KEY/ (per extra width \
            in w<width>/ there), KEY 128 bits of a SHA-256 of the video's identity (path, size, modification \
            time; or URL, ETag or Last-Modified, length) and of the settings that change the outputs. Items are \
            made in DIR/staging/ and renamed into place with a completion marker written last, so an item is \
            complete or absent.

            Run `catalog generate` as the task of a Slurm array, a Kubernetes Indexed Job or an AWS Batch array job \
            (it reads the shard from their environment), then `catalog status` and `catalog index`.

            Example:
              filmstrip catalog generate videos.txt --output previews --formats vtt,hls --shard 0/4
              filmstrip catalog status videos.txt previews
              filmstrip catalog index videos.txt previews --base-url https://cdn.example.com/previews/
            """,
        subcommands: [CatalogGenerateCommand.self, CatalogStatusCommand.self, CatalogIndexCommand.self]
    )
}

/// Reads a LIST argument.
func catalogItems(_ list: String) throws -> [CatalogItem] {
    do {
        return try CatalogList.read(URL(fileURLWithPath: list).standardizedFileURL)
    } catch {
        printError(error.description)
        throw ExitStatus.badInput
    }
}
