import FilmstripMedia
public import FilmstripPreviews
public import Foundation

/// A watch page that works straight from disk (`file://`): the video, its preview track's sheets and an
/// `index.html` whose cues are inlined, so it needs no server and makes no request beyond its own folder.
public enum StandalonePage {
    /// What ``write(video:to:options:)`` wrote.
    public struct Result: Sendable {
        /// The page.
        public var page: URL
        /// The number of preview thumbnails.
        public var thumbnails: Int
        /// The sheets, in `previews/`.
        public var sheets: [URL]
    }

    /// Generates the video's preview track into `directory/previews/`, copies the video beside the page, and
    /// writes `directory/index.html`.
    ///
    /// Writing again over a page this function wrote replaces it. Anything else is left alone: an `index.html`,
    /// a `previews` folder or a file of the video's name that it did not write makes it throw before it writes
    /// anything. The new previews are made in a staging folder and swapped in only once complete.
    public static func write(
        video: URL, to directory: URL,
        options: PreviewTrackConfiguration = ServerConfiguration(libraries: []).trackOptions
    ) async throws -> Result {
        let files = FileManager.default
        let directory = directory.standardizedFileURL
        let page = directory.appendingPathComponent("index.html")
        let previews = directory.appendingPathComponent("previews", isDirectory: true)
        let copy = directory.appendingPathComponent(video.lastPathComponent)
        let ours: Bool
        if files.fileExists(atPath: page.path) {
            guard let text = try? String(contentsOf: page, encoding: .utf8), text.contains(marker) else {
                throw ServerError(status: 409, "\(page.path) exists and is not a page Filmstrip wrote")
            }
            ours = true
        } else {
            ours = false
        }
        let same = isSameFile(video, copy)
        if !ours {
            for existing in [previews, copy]
            where files.fileExists(atPath: existing.path) && !(existing == copy && same) {
                throw ServerError(status: 409, "\(existing.path) is in the way: choose an empty or new folder")
            }
        }
        var isDirectory: ObjCBool = false
        let existed = files.fileExists(atPath: directory.path, isDirectory: &isDirectory)
        if existed, !isDirectory.boolValue {
            throw ServerError(status: 409, "\(directory.path) is a file, not a folder")
        }
        try files.createDirectory(at: directory, withIntermediateDirectories: true)
        // A failed run leaves no folder behind that it made itself.
        var succeeded = false
        defer { if !existed, !succeeded { try? files.removeItem(at: directory) } }
        let staging = directory.appendingPathComponent(".previews-\(UUID().uuidString)", isDirectory: true)
        defer { try? files.removeItem(at: staging) }
        let summary = try await PreviewTrackGenerator.generate(from: video, to: staging, options: options)
        let inside: (URL) -> Bool = {
            $0.isFileURL && VideoLibrary.isInside($0.standardizedFileURL.path, staging.standardizedFileURL.path)
        }
        let track = try await PreparedTrack(track: summary.trackURL, origin: "generated", allowed: inside)
        let images = track.thumbnails.imageURLs.map { "previews/" + HTML.component($0.lastPathComponent) }
        var object = Pages.trackObject(track, duration: summary.duration) { images[$0] }
        object["origin"] = nil
        if !same {
            // A copy, not a link: editing the page's video must never touch the original.
            let temporary = directory.appendingPathComponent(".video-\(UUID().uuidString)")
            defer { try? files.removeItem(at: temporary) }
            try files.copyItem(at: video, to: temporary)
            try? files.removeItem(at: copy)
            try files.moveItem(at: temporary, to: copy)
        }
        try? files.removeItem(at: previews)
        try files.moveItem(at: staging, to: previews)
        var config: [String: Any] = ["track": object]
        if summary.duration.isFinite { config["duration"] = summary.duration }
        let html = Pages.watch(
            title: video.lastPathComponent, subtitle: "written by filmstrip page",
            videoURL: HTML.component(video.lastPathComponent), config: config,
            hint: "Hover or drag across the bar under the video to see its previews; arrow keys step 5 s. "
                + "Run <code>filmstrip serve DIR</code> to browse a folder of your own videos.",
            home: false)
        try Data(html.utf8).write(to: page, options: .atomic)
        succeeded = true
        let sheets = summary.sheetURLs.map { previews.appendingPathComponent($0.lastPathComponent) }
        return Result(page: page, thumbnails: summary.thumbnails, sheets: sheets)
    }

    /// What every watch page carries, so a page this function wrote can be told from any other `index.html`.
    private static let marker = "id=\"filmstrip-config\""

    /// Whether two paths name one file (same device and inode), links and spellings aside.
    private static func isSameFile(_ a: URL, _ b: URL) -> Bool {
        let files = FileManager.default
        guard let x = try? files.attributesOfItem(atPath: a.path), let y = try? files.attributesOfItem(atPath: b.path),
            let dx = x[.systemNumber] as? NSNumber, let dy = y[.systemNumber] as? NSNumber,
            let ix = x[.systemFileNumber] as? NSNumber, let iy = y[.systemFileNumber] as? NSNumber
        else { return false }
        return dx == dy && ix == iy
    }
}
