public import FilmstripMedia
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
    public static func write(
        video: URL, to directory: URL, options: PreviewTrackOptions = ServerConfiguration(libraries: []).trackOptions
    ) async throws -> Result {
        let files = FileManager.default
        let previews = directory.appendingPathComponent("previews", isDirectory: true)
        try? files.removeItem(at: previews)
        try files.createDirectory(at: directory, withIntermediateDirectories: true)
        let summary = try await PreviewTrackGenerator.generate(from: video, to: previews, options: options)
        let inside: (URL) -> Bool = { $0.isFileURL && $0.standardizedFileURL.path.hasPrefix(previews.path + "/") }
        let track = try await PreparedTrack(track: summary.trackURL, origin: "generated", allowed: inside)
        let images = track.thumbnails.imageURLs.map { "previews/" + HTML.component($0.lastPathComponent) }
        var object = Pages.trackObject(track, duration: summary.duration) { images[$0] }
        object["origin"] = nil
        let copy = directory.appendingPathComponent(video.lastPathComponent)
        if copy.standardizedFileURL != video.standardizedFileURL {
            try? files.removeItem(at: copy)
            // A copy, not a link: editing the page's video must never touch the original.
            try files.copyItem(at: video, to: copy)
        }
        let html = Pages.watch(
            title: video.lastPathComponent, subtitle: "Filmstrip demo",
            videoURL: HTML.component(video.lastPathComponent),
            config: ["duration": summary.duration, "track": object],
            hint: "Hover or drag across the bar under the video to see its previews; arrow keys step 5 s. "
                + "Run <code>filmstrip serve DIR</code> to browse a folder of your own videos.")
        let page = directory.appendingPathComponent("index.html")
        try Data(html.utf8).write(to: page, options: .atomic)
        return Result(page: page, thumbnails: summary.thumbnails, sheets: summary.sheetURLs)
    }
}
