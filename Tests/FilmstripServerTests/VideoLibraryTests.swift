import FilmstripServer
import FilmstripTesting
import Foundation
import Testing

@Suite("Video library: listing and the path rules")
struct VideoLibraryTests {
    /// library/{a.mp4, sub/Ünï 名.mkv, notes.txt, .hidden.mp4, out.mp4 -> outside, dir -> outside/, in.mp4 -> a.mp4}
    private static func makeTree() throws -> (TemporaryDirectory, URL, URL) {
        let temp = try TemporaryDirectory()
        let library = temp.url.appendingPathComponent("library")
        let outside = temp.url.appendingPathComponent("outside")
        let files = FileManager.default
        try files.createDirectory(at: library.appendingPathComponent("sub"), withIntermediateDirectories: true)
        try files.createDirectory(at: outside, withIntermediateDirectories: true)
        for path in ["a.mp4", "sub/Ünï 名.mkv", "notes.txt", ".hidden.mp4"] {
            try Data("x".utf8).write(to: library.appendingPathComponent(path))
        }
        try Data("secret".utf8).write(to: outside.appendingPathComponent("secret.mp4"))
        try files.createSymbolicLink(
            at: library.appendingPathComponent("out.mp4"),
            withDestinationURL: outside.appendingPathComponent("secret.mp4"))
        try files.createSymbolicLink(at: library.appendingPathComponent("dir"), withDestinationURL: outside)
        try files.createSymbolicLink(
            at: library.appendingPathComponent("in.mp4"), withDestinationURL: library.appendingPathComponent("a.mp4"))
        return (temp, library, outside)
    }

    @Test("lists videos recursively, skipping hidden files, other files and links that lead out")
    func listing() throws {
        let (temp, library, _) = try Self.makeTree()
        defer { temp.remove() }
        let videos = try VideoLibrary(directories: [library]).videos()
        #expect(videos.map(\.path) == ["a.mp4", "in.mp4", "sub/Ünï 名.mkv"])
        #expect(videos.last?.name == "Ünï 名.mkv")
    }

    @Test(
        "refuses dot segments, empty and absolute paths, slashes and NUL inside a component",
        arguments: [
            ["..", "outside", "secret.mp4"], ["sub", "..", "..", "outside", "secret.mp4"], [".", "a.mp4"],
            ["", "a.mp4"], ["sub", ""], ["..%2f"], ["../outside/secret.mp4"], ["sub/../a.mp4"], ["a.mp4\0.txt"],
        ])
    func forbiddenComponents(_ components: [String]) throws {
        let (temp, library, _) = try Self.makeTree()
        defer { temp.remove() }
        let videos = try VideoLibrary(directories: [library])
        #expect(throws: VideoLibrary.ResolveError.self) { try videos.resolve(components: components) }
        if components != ["..%2f"] {
            #expect {
                try videos.resolve(components: components)
            } throws: { error in
                if case .forbidden = error as? VideoLibrary.ResolveError { return true }
                return false
            }
        }
    }

    @Test("refuses an absolute src and links that lead out of the tree; follows links that stay inside")
    func links() throws {
        let (temp, library, outside) = try Self.makeTree()
        defer { temp.remove() }
        let videos = try VideoLibrary(directories: [library])
        #expect(throws: VideoLibrary.ResolveError.forbidden("absolute paths are not served")) {
            try videos.resolve(outside.appendingPathComponent("secret.mp4").path)
        }
        #expect(throws: VideoLibrary.ResolveError.forbidden("the file lies outside the library")) {
            try videos.resolve("out.mp4")
        }
        #expect(throws: VideoLibrary.ResolveError.forbidden("the file lies outside the library")) {
            try videos.resolve("dir/secret.mp4")
        }
        #expect(try videos.resolve("in.mp4").file.lastPathComponent == "a.mp4")
        #expect(try videos.resolve("sub/Ünï 名.mkv").size == 1)
        #expect(throws: VideoLibrary.ResolveError.self) { try videos.resolve("notes.txt") }
        #expect(throws: VideoLibrary.ResolveError.self) { try videos.resolve("missing.mp4") }
        #expect(videos.contains(library.appendingPathComponent("a.mp4")))
        #expect(!videos.contains(library.appendingPathComponent("out.mp4")))
        #expect(!videos.contains(URL(string: "https://example.com/library/a.mp4")!))
    }

    @Test("several folders are told apart by a label, made unique")
    func severalFolders() throws {
        let (temp, library, outside) = try Self.makeTree()
        defer { temp.remove() }
        let again = temp.url.appendingPathComponent("x/library")
        try FileManager.default.createDirectory(at: again, withIntermediateDirectories: true)
        try Data("y".utf8).write(to: again.appendingPathComponent("b.webm"))
        let videos = try VideoLibrary(directories: [library, outside, again])
        #expect(videos.roots.map(\.label) == ["library", "outside", "library-2"])
        #expect(
            Set(videos.videos().map(\.path)) == [
                "library/a.mp4", "library/in.mp4", "library/sub/Ünï 名.mkv", "library-2/b.webm", "outside/secret.mp4",
            ])
        #expect(try videos.resolve("library-2/b.webm").file.lastPathComponent == "b.webm")
        #expect(throws: VideoLibrary.ResolveError.self) { try videos.resolve("a.mp4") }
        #expect(throws: VideoLibrary.ResolveError.self) { try VideoLibrary(directories: [temp.file("missing")]) }
    }

    @Test("remote streams: listed by id for image URLs only; a bad id, a URL that is not http(s), a repeat refused")
    func remoteStreams() throws {
        let (temp, library, _) = try Self.makeTree()
        defer { temp.remove() }
        let stream = URL(string: "https://cdn.example.com/live/master.m3u8")!
        let videos = try VideoLibrary(directories: [library], streams: [("news/live", stream)])
        #expect(videos.remoteStreams.map(\.path) == ["news/live"])
        let found = try videos.resolveForImages(components: ["news", "live"])
        #expect(found.isRemote && found.isStream && found.file == stream)
        // The folders' videos answer too; the pages' resolver knows no remote stream.
        #expect(try videos.resolveForImages(components: ["a.mp4"]).isRemote == false)
        #expect(throws: VideoLibrary.ResolveError.self) { try videos.resolve(components: ["news", "live"]) }
        #expect(!videos.videos().contains { $0.isRemote })
        for (id, url) in [
            ("../x", stream), ("/abs", stream), ("a//b", stream), ("ok", URL(string: "file:///etc/passwd")!),
            ("ok", URL(string: "ftp://example.com/a.m3u8")!),
        ] {
            #expect(throws: VideoLibrary.ResolveError.self, "\(id) \(url)") {
                try VideoLibrary(directories: [library], streams: [(id, url)])
            }
        }
        #expect(throws: VideoLibrary.ResolveError.self) {
            try VideoLibrary(directories: [library], streams: [("a", stream), ("a", stream)])
        }
    }
}
