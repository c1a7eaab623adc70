import FilmstripLoading
import FilmstripSync
import FilmstripTesting
import Foundation
import Testing

@Suite("Disk cache")
struct DiskCacheTests {
    let directory: TemporaryDirectory
    init() throws { directory = try TemporaryDirectory() }

    @Test("store and read back; nothing temporary is left behind")
    func roundTrip() throws {
        let cache = DiskCache(directory: directory.url)
        let url = URL(string: "https://cdn.example.com/a.jpg")!
        #expect(try cache.data(for: url) == nil)
        try cache.store(Data([1, 2, 3]), for: url)
        #expect(try cache.data(for: url) == Data([1, 2, 3]))
        try cache.store(Data([4, 5]), for: url)
        #expect(try cache.data(for: url) == Data([4, 5]))
        #expect(cache.totalSize == 2 + DiskCache.trailerSize && cache.entryCount == 1)
        let names = try FileManager.default.contentsOfDirectory(atPath: directory.url.path)
        #expect(names == [DiskCache.fileName(for: url)])
        directory.remove()
    }

    @Test("keys ignore scheme and host case, default ports and fragments, not queries")
    func keys() {
        let a = DiskCache.fileName(for: URL(string: "HTTPS://CDN.Example.com:443/a.jpg#xywh=1,2,3,4")!)
        #expect(a == DiskCache.fileName(for: URL(string: "https://cdn.example.com/a.jpg")!))
        #expect(a != DiskCache.fileName(for: URL(string: "https://cdn.example.com/a.jpg?v=2")!))
        #expect(a != DiskCache.fileName(for: URL(string: "https://cdn.example.com/A.jpg")!))
        #expect(a.count == 64)
    }

    @Test("over the size limit, the least recently used entries go first")
    func eviction() throws {
        let entry = 1000 + DiskCache.trailerSize
        // Each use a second after the one before, on a clock of the test's.
        let uses = Mutex(0)
        let now: @Sendable () -> Date = {
            let use = uses.withLock { count in
                count += 1
                return count
            }
            return Date(timeIntervalSince1970: 1_800_000_000 + Double(use))
        }
        let cache = DiskCache(directory: directory.url, sizeLimit: 3 * entry, now: now)
        let urls = (0..<4).map { URL(string: "https://cdn.example.com/\($0).bin")! }
        for url in urls.prefix(3) { try cache.store(Data(count: 1000), for: url) }
        // Use entry 0 so entry 1 becomes the least recently used.
        _ = try cache.data(for: urls[0])
        try cache.store(Data(count: 1000), for: urls[3])
        #expect(cache.contains(urls[0]))
        #expect(!cache.contains(urls[1]))
        #expect(cache.contains(urls[2]) && cache.contains(urls[3]))
        #expect(cache.totalSize == 3 * entry)
        // A fresh instance rebuilds the index from the directory.
        let reopened = DiskCache(directory: directory.url, sizeLimit: 3 * entry)
        #expect(reopened.totalSize == 3 * entry && reopened.entryCount == 3)
        directory.remove()
    }

    @Test("an entry cut short, changed, emptied or without its trailer is dropped when read, never served")
    func damagedEntries() throws {
        let cache = DiskCache(directory: directory.url)
        let payload = Data((0..<5000).map { UInt8($0 % 251) })
        let damages: [(String, (inout Data) -> Void)] = [
            ("truncated by one byte", { $0.removeLast() }),
            ("truncated inside the bytes", { $0 = $0.prefix(3000) }),
            ("a byte changed", { $0[1234] ^= 0x40 }),
            ("a trailer byte changed", { $0[$0.count - 1] ^= 1 }),
            ("emptied", { $0 = Data() }),
            ("the bytes alone, no trailer", { $0 = $0.prefix(5000) }),
            ("grown by a byte", { $0.append(0) }),
        ]
        for (k, (name, damage)) in damages.enumerated() {
            let url = URL(string: "https://cdn.example.com/\(k).jpg")!
            try cache.store(payload, for: url)
            let file = cache.fileURL(for: url)
            var stored = try Data(contentsOf: file)
            #expect(stored.count == payload.count + DiskCache.trailerSize)
            damage(&stored)
            try stored.write(to: file)
            #expect(try cache.data(for: url) == nil, "\(name)")
            #expect(!FileManager.default.fileExists(atPath: file.path), "\(name): the entry is removed")
            #expect(!cache.contains(url))
        }
        #expect(cache.entryCount == 0 && cache.totalSize == 0)
        // A sound entry beside them still reads back.
        try cache.store(payload, for: URL(string: "https://cdn.example.com/sound.jpg")!)
        #expect(try cache.data(for: URL(string: "https://cdn.example.com/sound.jpg")!) == payload)
        directory.remove()
    }

    @Test("removeAll empties the directory, including stray temporary files")
    func removeAll() throws {
        let cache = DiskCache(directory: directory.url)
        try cache.store(Data([1]), for: URL(string: "https://x/1")!)
        try directory.write(".tmp-crashed-writer", [9, 9])
        try directory.write("unrelated.txt", text: "keep me")
        try cache.removeAll()
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory.url.path) == ["unrelated.txt"])
        #expect(cache.totalSize == 0)
        directory.remove()
    }

    @Test("an unwritable cache directory is a cacheIO error")
    func unwritable() throws {
        let file = try directory.write("not-a-directory", text: "x")
        let cache = DiskCache(directory: file)
        #expect {
            try cache.store(Data([1]), for: URL(string: "https://x/1")!)
        } throws: { ($0 as? LoadingError)?.kind == .cacheIO }
        directory.remove()
    }
}

@Suite("Offline reuse and cache policies")
struct CachePolicyTests {
    @Test("a resource loaded once loads again after the server is gone; offline misses name the URL")
    func offline() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let server = try LoopbackServer()
        server.serve("/track.vtt", text: "WEBVTT\n")
        let cache = DiskCache(directory: directory.url)
        let loader = ResourceLoader(configuration: fastRetries(1), diskCache: cache)
        let url = server.url("/track.vtt")
        #expect(try await loader.data(for: url, policy: .networkFirst) == Data("WEBVTT\n".utf8))
        server.setReachable(false)
        // Network first falls back to the cached copy when the connection fails.
        #expect(try await loader.data(for: url, policy: .networkFirst) == Data("WEBVTT\n".utf8))
        #expect(try await loader.data(for: url, policy: .cacheOnly) == Data("WEBVTT\n".utf8))
        let missing = server.url("/never-fetched.jpg")
        let error = await loadingError { _ = try await loader.data(for: missing, policy: .cacheOnly) }
        #expect(error?.kind == .notCached)
        #expect(error?.description.contains("never-fetched.jpg") == true)
    }

    @Test("cache first does not touch the network when the entry exists")
    func cacheFirst() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let server = try LoopbackServer()
        server.serve("/a.bin", body: [1, 2, 3])
        let loader = ResourceLoader(diskCache: DiskCache(directory: directory.url))
        _ = try await loader.data(for: server.url("/a.bin"), policy: .cacheFirst)
        _ = try await loader.data(for: server.url("/a.bin"), policy: .cacheFirst)
        #expect(server.requestCount("/a.bin") == 1)
    }

    @Test("content that fails validation is neither returned nor stored")
    func validation() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let server = try LoopbackServer()
        server.serve("/bad.jpg", body: Array("<html>oops</html>".utf8))
        let cache = DiskCache(directory: directory.url)
        let loader = ResourceLoader(diskCache: cache)
        struct NotAnImage: Error {}
        let error = await loadingError {
            _ = try await loader.data(for: server.url("/bad.jpg"), policy: .cacheFirst) { data in
                if data.first != 0xFF { throw NotAnImage() }
            }
        }
        #expect(error?.kind == .invalidContent)
        #expect(cache.entryCount == 0)
    }

    @Test("file URLs: missing and oversized files are clear errors")
    func files() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let file = try directory.write("big.bin", [UInt8](repeating: 7, count: 5000))
        let loader = ResourceLoader(configuration: LoadingConfiguration(maximumResponseSize: 1000))
        let tooLarge = await loadingError { _ = try await loader.data(for: file) }
        #expect(tooLarge?.kind == .tooLarge(limit: 1000))
        let missing = await loadingError { _ = try await loader.data(for: directory.file("nope.vtt")) }
        #expect(missing?.kind == .fileUnreadable)
        #expect(missing?.description.contains("nope.vtt") == true)
    }
}

@Suite("Memory cache")
struct MemoryCacheTests {
    @Test("least recently used entries are evicted by cost")
    func lru() {
        let cache = MemoryCache<Int, String>(costLimit: 30)
        cache.insert("a", for: 1, cost: 10)
        cache.insert("b", for: 2, cost: 10)
        cache.insert("c", for: 3, cost: 10)
        #expect(cache.value(for: 1) == "a")  // 1 is now most recent
        cache.insert("d", for: 4, cost: 10)
        #expect(cache.value(for: 2) == nil)
        #expect(cache.keysByRecency == [4, 1, 3])
        #expect(cache.totalCost == 30)
        cache.insert("big", for: 5, cost: 25)
        #expect(cache.keysByRecency == [5])
        cache.insert("huge", for: 6, cost: 31)
        #expect(cache.value(for: 6) == nil && cache.count == 1)
    }

    @Test("count limit, replacement and removal keep the accounting right")
    func countAndReplace() {
        let cache = MemoryCache<String, Int>(costLimit: 1000, countLimit: 2)
        cache.insert(1, for: "x", cost: 100)
        cache.insert(2, for: "x", cost: 50)
        #expect(cache.totalCost == 50 && cache.count == 1)
        cache.insert(3, for: "y", cost: 1)
        cache.insert(4, for: "z", cost: 1)
        #expect(cache.count == 2 && cache.value(for: "x") == nil)
        cache.removeValue(for: "y")
        #expect(cache.count == 1 && cache.totalCost == 1)
        cache.removeAll()
        #expect(cache.count == 0 && cache.totalCost == 0)
    }

    @Test("concurrent use from many threads stays consistent")
    func concurrency() async {
        let cache = MemoryCache<Int, Int>(costLimit: 500)
        await withTaskGroup(of: Void.self) { group in
            for t in 0..<8 {
                group.addTask {
                    for i in 0..<2000 {
                        cache.insert(i, for: (i * 7 + t) % 300, cost: 3)
                        _ = cache.value(for: i % 300)
                    }
                }
            }
        }
        #expect(cache.totalCost <= 500)
        #expect(cache.totalCost == cache.count * 3)
        #expect(cache.keysByRecency.count == cache.count)
    }
}
