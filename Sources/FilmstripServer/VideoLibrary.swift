import FilmstripMedia
import FilmstripStreaming
public import Foundation

/// The videos under a set of folders, and the one door through which a request's path becomes a file.
///
/// A video is named by its path relative to its folder, with `/` between components; with several folders the
/// first component is the folder's label (its last path component, made unique). ``resolve(_:)`` accepts only
/// names made of ordinary components, then resolves symbolic links and checks that the file is still inside
/// its folder, so `..`, absolute paths and links that lead out of the tree never reach the file system's
/// content.
public struct VideoLibrary: Sendable {
    /// A served folder.
    public struct Root: Sendable, Hashable {
        /// The label naming the folder in video paths (empty when there is only one folder).
        public var label: String
        /// The folder, with symbolic links resolved.
        public var directory: URL
    }

    /// A video in the library.
    public struct Video: Sendable, Hashable {
        /// Its name in the library: what `/watch/` and `src=` carry.
        public var path: String
        /// The file, with symbolic links resolved.
        public var file: URL
        /// The root it lies in.
        public var root: Root
        /// Size in bytes.
        public var size: Int64
        /// Last modification.
        public var modified: Date

        /// The name to show: the file's, and for a stream its folder's too (streams' manifests share names such as
        /// `master.m3u8`).
        public var name: String {
            let folder = file.deletingLastPathComponent().lastPathComponent
            return isStream && !folder.isEmpty && folder != root.directory.lastPathComponent
                ? folder + "/" + file.lastPathComponent : file.lastPathComponent
        }

        /// Whether this is a stream (an HLS playlist or a DASH MPD) rather than a file.
        public var isStream: Bool { isRemote || ManifestDetection.kind(ofExtension: file.pathExtension) != nil }

        /// Whether this is a remote stream listed by URL (``VideoLibrary/remoteStreams``) rather than a file.
        public var isRemote: Bool { !file.isFileURL }

        /// Whether this is a DASH MPD, which browsers do not play natively.
        public var isDASH: Bool { ManifestDetection.kind(ofExtension: file.pathExtension) == .dash }

        /// This version of the file: its path, size and modification time (a changed file is another version).
        var version: String {
            isRemote ? "remote\n\(file.absoluteString)" : "\(file.path)\n\(size)\n\(modified.timeIntervalSince1970)"
        }
    }

    /// Why a name does not lead to a video.
    public enum ResolveError: Error, Sendable, Equatable {
        /// The name is not allowed: a `..` or `.` component, an empty component, an absolute path, a `/` or NUL
        /// inside a component, or a file that lies outside the library once links are resolved (HTTP 403).
        case forbidden(String)
        /// No such video (HTTP 404).
        case notFound(String)
    }

    /// File extensions taken as videos (``VideoFolder/videoExtensions``), files of sound alone
    /// (``VideoFolder/audioExtensions``: shown with their cover picture), and streams' manifests.
    public static var videoExtensions: Set<String> {
        VideoFolder.videoExtensions.union(VideoFolder.audioExtensions).union(["m3u8", "mpd"])
    }

    /// What a stream's manifest may name and `/media/` serves beside videos: playlists, segments, init sections,
    /// audio, subtitles, keys and images.
    public static let streamPartExtensions: Set<String> = [
        "m3u8", "mpd", "m4s", "m4a", "m4v", "mp4", "cmfv", "cmfa", "aac", "ac3", "ec3", "mp3", "vtt", "key", "jpg",
        "jpeg", "png", "webp",
    ]

    /// The served folders.
    public let roots: [Root]
    /// Remote streams (HLS or DASH over http or https) by id, as a streams list names them. They have image URLs
    /// and a place in `/videos.json`; the pages, `/api/` and `/media/` are for the folders' videos.
    public let remoteStreams: [Video]

    /// A library over `directories` and the remote streams `streams` lists (id, URL). Throws when a folder is not a
    /// readable folder, or a stream's id or URL is not usable (an id made of ordinary path components, given once;
    /// an http or https URL).
    public init(directories: [URL], streams: [(id: String, url: URL)] = []) throws {
        var roots: [Root] = []
        var used: Set<String> = []
        for directory in directories {
            let resolved = directory.standardizedFileURL.resolvingSymlinksInPath()
            var isDirectory: ObjCBool = false
            guard FileManager.default.fileExists(atPath: resolved.path, isDirectory: &isDirectory),
                isDirectory.boolValue
            else {
                throw ResolveError.notFound("\(directory.path) is not a folder")
            }
            var label = ""
            if directories.count > 1 {
                let base = resolved.lastPathComponent.isEmpty ? "root" : resolved.lastPathComponent
                label = base
                var n = 2
                while used.contains(label) {
                    label = "\(base)-\(n)"
                    n += 1
                }
                used.insert(label)
            }
            roots.append(Root(label: label, directory: resolved))
        }
        self.roots = roots
        var remote: [Video] = []
        for (id, url) in streams {
            let components = id.split(separator: "/", omittingEmptySubsequences: false).map(String.init)
            guard !id.hasPrefix("/"),
                components.allSatisfy({ !$0.isEmpty && $0 != "." && $0 != ".." && !$0.contains("\0") })
            else {
                throw ResolveError.forbidden("the stream id \"\(id)\" is not a path of ordinary components")
            }
            guard ["http", "https"].contains(url.scheme?.lowercased() ?? ""), url.host != nil else {
                throw ResolveError.forbidden("the stream \(id) is not an http or https URL: \(url.absoluteString)")
            }
            guard !remote.contains(where: { $0.path == id }) else {
                throw ResolveError.forbidden("the stream id \(id) is listed twice")
            }
            remote.append(
                Video(
                    path: id, file: url, root: Root(label: "", directory: URL(fileURLWithPath: "/")), size: 0,
                    modified: .distantPast))
        }
        remoteStreams = remote
    }

    /// The video an image URL's id names (components already percent-decoded): a remote stream of that id, else
    /// the folders' video.
    public func resolveForImages(components: [String]) throws(ResolveError) -> Video {
        if let stream = remoteStreams.first(where: { $0.path == components.joined(separator: "/") }) { return stream }
        return try resolve(components: components)
    }

    /// Every video under the folders, sorted by path, as ``VideoFolder`` counts them (a stream is one item, its
    /// manifest, never its segments or per-Representation files); links that lead out of their folder are skipped.
    public func videos() -> [Video] {
        var found: [Video] = []
        for root in roots {
            for url in VideoFolder.videos(under: root.directory, includingStreams: true, includingAudio: true) {
                let relative = url.path.dropFirst(root.directory.path.count)
                let components = relative.split(separator: "/").map(String.init)
                guard !components.isEmpty else { continue }
                let name = root.label.isEmpty ? components : [root.label] + components
                if let video = try? resolve(components: name) { found.append(video) }
            }
        }
        return found.sorted { $0.path.localizedStandardCompare($1.path) == .orderedAscending }
    }

    /// The video a `src=` value names: components separated by `/`, already percent-decoded.
    public func resolve(_ path: String) throws(ResolveError) -> Video {
        guard !path.hasPrefix("/") else { throw .forbidden("absolute paths are not served") }
        return try resolve(components: path.split(separator: "/", omittingEmptySubsequences: false).map(String.init))
    }

    /// The video or stream part (``streamPartExtensions``) a `/media/` path names, each component percent-decoded.
    public func resolveMedia(components: [String]) throws(ResolveError) -> Video {
        try resolve(components: components, extensions: Self.videoExtensions.union(Self.streamPartExtensions))
    }

    /// The video named by `components`, each already percent-decoded.
    public func resolve(components: [String]) throws(ResolveError) -> Video {
        try resolve(components: components, extensions: Self.videoExtensions)
    }

    private func resolve(components: [String], extensions: Set<String>) throws(ResolveError) -> Video {
        guard !components.isEmpty else { throw .notFound("no video named") }
        for component in components {
            if component.isEmpty || component == "." || component == ".." {
                throw .forbidden("the path component \"\(component)\" is not allowed")
            }
            if component.contains("/") || component.contains("\0") {
                throw .forbidden("a path component may not contain \"/\" or NUL")
            }
        }
        var rest = components[...]
        let root: Root
        if roots.count == 1 {
            root = roots[0]
        } else {
            guard let match = roots.first(where: { $0.label == components[0] }) else {
                throw .notFound("no library folder named \(components[0])")
            }
            root = match
            rest = rest.dropFirst()
            guard !rest.isEmpty else { throw .notFound("no video named") }
        }
        // Hidden files and folders inside a library are not listed, and not served either.
        if rest.contains(where: { $0.hasPrefix(".") }) {
            throw .notFound("no video at \(components.joined(separator: "/")) (hidden files are not served)")
        }
        var candidate = root.directory
        for component in rest { candidate.appendPathComponent(component, isDirectory: false) }
        // Links resolved, the file must still be inside its folder.
        let file = candidate.resolvingSymlinksInPath()
        guard Self.isInside(file.path, root.directory.path) else {
            throw .forbidden("the file lies outside the library")
        }
        guard extensions.contains(file.pathExtension.lowercased()),
            let attributes = try? FileManager.default.attributesOfItem(atPath: file.path),
            attributes[.type] as? FileAttributeType == .typeRegular
        else { throw .notFound("no video at \(components.joined(separator: "/"))") }
        let size = (attributes[.size] as? NSNumber)?.int64Value ?? 0
        let modified = attributes[.modificationDate] as? Date ?? .distantPast
        let path = components.joined(separator: "/")
        return Video(path: path, file: file, root: root, size: size, modified: modified)
    }

    /// Whether `url` is a file inside one of the folders once links are resolved (for images a track refers to).
    public func contains(_ url: URL) -> Bool {
        guard url.isFileURL else { return false }
        let file = url.standardizedFileURL.resolvingSymlinksInPath().path
        return roots.contains { Self.isInside(file, $0.directory.path) }
    }

    /// Whether `path` lies under `directory`, compared byte for byte (`String.hasPrefix` would take two
    /// spellings of one accented name, NFC and NFD, as equal, though the file system does not).
    static func isInside(_ path: String, _ directory: String) -> Bool {
        let base = directory.hasSuffix("/") ? directory : directory + "/"
        return path.utf8.starts(with: base.utf8) && path.utf8.count > base.utf8.count
    }
}
