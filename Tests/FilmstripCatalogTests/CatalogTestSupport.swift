import FilmstripMedia
import FilmstripPreviews
import FilmstripTesting
import Foundation

@testable import FilmstripCatalog

#if canImport(Glibc)
    import Glibc
#endif

/// A catalog over copies of the catalog clips (and a broken file) in a temporary folder.
struct CatalogBench {
    let directory: TemporaryDirectory
    let videos: [URL]
    let list: URL
    let catalog: Catalog

    init(broken: Bool = true) throws {
        directory = try TemporaryDirectory(prefix: "filmstrip-catalog")
        videos = try CatalogFixtures.copy(into: directory.file("videos"), broken: broken)
        list = directory.file("videos.txt")
        try Data(videos.map { "videos/" + $0.lastPathComponent }.joined(separator: "\n").utf8).write(to: list)
        catalog = Catalog(directory: directory.file("out"))
    }

    var items: [CatalogItem] { get throws { try CatalogList.read(list) } }

    /// Small, quick outputs: a thumbnail a second, two formats.
    static func options(jobs: Int = 2) -> CatalogRunConfiguration {
        var options = CatalogRunConfiguration()
        options.preview.interval = 1
        options.preview.formats = [.vtt, .hls]
        options.jobs = jobs
        options.cores = 2
        return options
    }

    func run(
        _ options: CatalogRunConfiguration = Self.options(), shard: CatalogShard = .whole
    ) async throws
        -> CatalogRunSummary
    {
        try await CatalogGenerator.run(try items, shard: shard, catalog: catalog, options: options)
    }

    /// The key an item has under `options` now.
    func key(_ video: URL, _ options: CatalogRunConfiguration = Self.options()) throws -> ContentKey {
        ContentKey(identity: try ItemIdentity.ofFile(video), settings: PreviewOutputSettings(options.preview))
    }

    /// Every output file of every complete item, by item folder and path, with its bytes (the marker left out).
    func outputs() throws -> [String: Data] {
        var files: [String: Data] = [:]
        for key in catalog.storedKeys() {
            let folder = catalog.itemDirectory(of: key)
            for path in ItemContext.files(under: folder) where path != Catalog.markerName {
                files[key.hex + "/" + path] = try Data(contentsOf: folder.appendingPathComponent(path))
            }
        }
        return files
    }

    func remove() { directory.remove() }
}

/// Holds the `flock` of a lock file, as another process making that item would.
final class HeldLock {
    private let fd: Int32
    init(_ path: String) throws {
        fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0o644)
        guard fd >= 0, flock(fd, LOCK_EX | LOCK_NB) == 0 else { throw CatalogError(.storage, "cannot lock \(path)") }
    }
    func release() { close(fd) }
}

/// Moves a file's modification time (a changed video, as far as the catalog can tell).
func touch(_ url: URL, secondsAgo: Double) throws {
    try FileManager.default.setAttributes(
        [.modificationDate: Date().addingTimeInterval(-secondsAgo)], ofItemAtPath: url.path)
}
