import ArgumentParser
import Filmstrip
import FilmstripCatalog
import Foundation

struct CatalogIndexCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "index",
        abstract: "Write one JSON index mapping every input to its track URLs, for an app or a CDN.",
        discussion: """
            Writes DIR/index.json (or --output) atomically: "items" maps each complete input to its key, duration, \
            thumbnail count, tile size and track URLs per format (and per extra width); "missing" and "failed" list \
            the rest. Paths are relative to DIR unless --base-url is given. Exit status: 0 when every item is in \
            the index, 1 when some are not (the index is written all the same), 2 on bad input.
            """
    )

    @Argument(help: "A list file (paths and URLs) or a folder of videos.")
    var list: String

    @Argument(help: "The catalog folder.")
    var directory: String

    @Option(name: .shortAndLong, help: "Where to write the index (default: DIR/index.json).")
    var output: String?

    @Option(name: .customLong("base-url"), help: "A URL the catalog folder is served at, put before every path.")
    var baseURL: String?

    @OptionGroup var network: NetworkOptions

    func run() async throws {
        let items = try catalogItems(list)
        let catalog = Catalog(directory: URL(fileURLWithPath: directory, isDirectory: true))
        let destination =
            output.map { URL(fileURLWithPath: $0) } ?? catalog.directory.appendingPathComponent("index.json")
        let base = baseURL.map { $0.hasSuffix("/") ? $0 : $0 + "/" }
        let index: CatalogIndex
        do {
            let status = try await CatalogStatus.read(
                items, catalog: catalog, loading: network.applied(to: LoadingConfiguration()))
            index = CatalogIndex(status, catalog: catalog, baseURL: base)
            try index.write(to: destination)
        } catch {
            printError("\(error)")
            throw ExitStatus.badInput
        }
        print(
            "\(destination.path): \(index.items.count) of \(items.count) items"
                + (index.failed.isEmpty ? "" : ", \(index.failed.count) failed")
                + (index.missing.isEmpty ? "" : ", \(index.missing.count) missing")
                + (index.unreachable.isEmpty
                    ? "" : ", \(index.unreachable.count) unreachable (the last version made kept, if any)"))
        if index.items.count < items.count || !index.unreachable.isEmpty { throw ExitCode(1) }
    }
}
