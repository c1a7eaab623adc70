import ArgumentParser
import Filmstrip
import Foundation

struct CacheCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "cache",
        abstract: "Manage the disk cache of tracks and images.",
        subcommands: [Clear.self]
    )

    struct Clear: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "clear", abstract: "Remove every cached track and image.")

        @OptionGroup var cache: CacheOptions

        func run() async throws {
            let diskCache = DiskCache(directory: cache.directory)
            let (count, bytes) = (diskCache.entryCount, diskCache.totalSize)
            do {
                try diskCache.removeAll()
            } catch {
                throw fail(error)
            }
            print("removed \(count) entries (\(bytes) bytes) from \(cache.directory.path)")
        }
    }
}
