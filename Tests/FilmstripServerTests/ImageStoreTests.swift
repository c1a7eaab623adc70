import FilmstripLoading
import FilmstripSync
import FilmstripTesting
import Foundation
import Testing

@testable import FilmstripServer

@Suite("Image URLs: one decode per image, a bounded queue, a disk cache")
struct ImageStoreTests {
    /// Holds every render until opened; counts the renders that started.
    final class Gate: Sendable {
        private let state = Mutex<(started: Int, open: Bool, waiting: [CheckedContinuation<Void, Never>])>(
            (0, false, []))

        var started: Int { state.withLock { $0.started } }

        func pass() async {
            await withCheckedContinuation { continuation in
                let go = state.withLock { s -> Bool in
                    s.started += 1
                    if s.open { return true }
                    s.waiting.append(continuation)
                    return false
                }
                if go { continuation.resume() }
            }
        }

        func open() {
            let waiting = state.withLock { s -> [CheckedContinuation<Void, Never>] in
                s.open = true
                defer { s.waiting = [] }
                return s.waiting
            }
            for continuation in waiting { continuation.resume() }
        }
    }

    static func parameters(_ time: String) throws -> ImageParameters {
        try ImageParameters(format: .jpeg, query: [("time", time)])
    }

    @Test("identical requests share a render; past the queue limit another image is refused; the disk keeps it")
    func queueAndDisk() async throws {
        let folder = try TemporaryDirectory(prefix: "filmstrip-images")
        defer { folder.remove() }
        let library = folder.url.appendingPathComponent("library", isDirectory: true)
        try FileManager.default.createDirectory(at: library, withIntermediateDirectories: true)
        try Data("not decoded here".utf8).write(to: library.appendingPathComponent("a.mp4"))
        let video = try VideoLibrary(directories: [library]).resolve("a.mp4")
        let disk = DiskCache(directory: folder.url.appendingPathComponent("images", isDirectory: true))
        let gate = Gate()
        let store = ImageStore(disk: disk, queueLimit: 1) { _, parameters in
            await gate.pass()
            return Data("image at \(parameters.time ?? -1)".utf8)
        }
        let one = try Self.parameters("1")
        let first = Task { try await store.image(of: video, one) }
        #expect(await eventually { gate.started == 1 })
        let same = Task { try await store.image(of: video, one) }
        // Another image while the one slot is taken: refused at once, not queued.
        await #expect(throws: ImageStore.Busy.self) { try await store.image(of: video, try Self.parameters("2")) }
        gate.open()
        #expect(try await first.value == Data("image at 1.0".utf8))
        #expect(try await same.value == Data("image at 1.0".utf8))
        #expect(store.renderCount == 1 && gate.started == 1)
        // The slot is free again.
        #expect(try await store.image(of: video, try Self.parameters("2")) == Data("image at 2.0".utf8))
        // Another process's store over the same disk: the image comes from the disk, nothing is rendered.
        let later = ImageStore(disk: disk, queueLimit: 1) { _, _ in
            Issue.record("rendered again")
            return Data()
        }
        #expect(try await later.image(of: video, one) == Data("image at 1.0".utf8))
        #expect(later.renderCount == 0)
    }
}
