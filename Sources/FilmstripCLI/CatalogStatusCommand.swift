import ArgumentParser
import Filmstrip
import FilmstripCatalog
import Foundation

struct CatalogStatusCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "status",
        abstract: "Say which items of a catalog are done, running, failed or missing.",
        discussion: """
            Keys are worked out as `catalog generate` does, under the settings of the catalog's last run \
            (DIR/catalog.json): a file is stat'ed, a URL costs one one-byte request. States: done, running (a live \
            process holds its lock), failed, missing, corrupt (with --verify; `generate --verify` makes it again) \
            and unreachable (a URL that cannot be reached now; its last version stays in the index). Lists every \
            item that is not done (all of them with --all), then a summary. Exit status: 0 when every item is \
            done, 1 while any is missing, running, corrupt or unreachable (before the first run, all are \
            missing), 3 when the rest failed, 2 on bad input.
            """
    )

    @Argument(help: "A list file (paths and URLs) or a folder of videos.")
    var list: String

    @Argument(help: "The catalog folder.")
    var directory: String

    @Flag(help: "List done items too.")
    var all = false

    @Flag(help: "Read every output of done items and check it against the SHA-256 in its completion marker.")
    var verify = false

    @Flag(help: "One JSON line per item, then a summary line.")
    var json = false

    @OptionGroup var network: NetworkOptions

    func run() async throws {
        let items = try catalogItems(list)
        let catalog = Catalog(directory: URL(fileURLWithPath: directory, isDirectory: true))
        let status: CatalogStatus
        do {
            status = try await CatalogStatus.read(
                items, catalog: catalog, loading: network.applied(to: LoadingConfiguration()), verify: verify)
        } catch {
            printError(error.description)
            throw ExitStatus.badInput
        }
        for item in status.items where all || item.state != .done {
            let folder = item.key.map { catalog.relativePath(of: $0) }
            if json {
                print(
                    JSON.object([
                        ("input", .string(item.item.input)), ("state", .string(item.state.rawValue)),
                        ("key", item.key.map { .string($0.hex) } ?? .null),
                        ("directory", folder.map(JSON.string) ?? .null),
                        ("error", item.error.map { .string("\($0.kind): \($0.message)") } ?? .null),
                    ]).text)
            } else {
                var line = item.state.rawValue.padding(toLength: 8, withPad: " ", startingAt: 0) + item.item.input
                if let error = item.error { line += "  (\(error.kind): \(error.message))" }
                if item.state == .corrupt, let folder { line += "  (remove \(folder) to have it made again)" }
                print(line)
            }
        }
        let counts = CatalogStatus.State.allCases.map { ($0, status.count($0)) }
        if json {
            print(
                JSON.object(
                    [("event", .string("summary")), ("items", .int(status.items.count))]
                        + counts.map { ($0.0.rawValue, JSON.int($0.1)) } + [("orphans", .int(status.orphans))]
                ).text)
        } else {
            let parts = counts.filter { $0.1 > 0 || $0.0 == .done }.map { "\($0.1) \($0.0.rawValue)" }
            print(
                "\(status.items.count) items: " + parts.joined(separator: ", ")
                    + (status.orphans > 0 ? "; \(status.orphans) complete items no listed video has any more" : ""))
        }
        if !status.started { printError("no run yet in \(catalog.directory.path): every item is missing") }
        let pending = [CatalogStatus.State.missing, .running, .corrupt, .unreachable].map(status.count).reduce(0, +)
        if pending > 0 { throw ExitCode(1) }
        if status.count(.failed) > 0 { throw ExitCode(3) }
    }
}
