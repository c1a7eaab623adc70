public import Foundation

/// The videos in a folder tree, as a person would count them.
///
/// A video is a regular file with a video extension (``videoExtensions``). Hidden files and folders are skipped,
/// and so are the segments an HLS playlist beside them lists: the `.ts` pieces of a stream the `ffmpeg` CLI wrote
/// are not videos of their own. A file addressed by byte ranges (ffmpeg's single-file mode) holds the whole stream
/// and stays a video.
public enum VideoFolder {
    /// File extensions taken as videos.
    public static let videoExtensions: Set<String> = [
        "mp4", "m4v", "mov", "mkv", "webm", "ts", "m2ts", "mts", "avi", "mpg", "mpeg", "ogv", "flv", "3gp",
    ]

    /// Every video under `directory` (standardized file URLs), sorted by path.
    public static func videos(under directory: URL) -> [URL] {
        guard
            let walker = FileManager.default.enumerator(
                at: directory, includingPropertiesForKeys: [.isRegularFileKey],
                options: [.skipsHiddenFiles, .skipsPackageDescendants])
        else { return [] }
        var found: [URL] = []
        var segmentsByFolder: [String: Set<String>] = [:]
        for case let url as URL in walker {
            guard videoExtensions.contains(url.pathExtension.lowercased()) else { continue }
            let folder = url.deletingLastPathComponent()
            let segments = segmentsByFolder[folder.path] ?? playlistEntries(in: folder)
            segmentsByFolder[folder.path] = segments
            guard !segments.contains(url.lastPathComponent) else { continue }
            found.append(url.standardizedFileURL)
        }
        return found.sorted { $0.path.localizedStandardCompare($1.path) == .orderedAscending }
    }

    /// The file names the HLS playlists of a folder list (segments and `EXT-X-MAP` sections), read from playlists
    /// of at most 4 MB.
    public static func playlistEntries(in folder: URL) -> Set<String> {
        let files = (try? FileManager.default.contentsOfDirectory(atPath: folder.path)) ?? []
        var names: Set<String> = []
        for file in files where file.lowercased().hasSuffix(".m3u8") {
            let url = folder.appendingPathComponent(file)
            guard let size = (try? FileManager.default.attributesOfItem(atPath: url.path))?[.size] as? NSNumber,
                size.intValue <= 4 << 20, let text = try? String(contentsOf: url, encoding: .utf8)
            else { continue }
            var ranged = false
            for line in text.split(whereSeparator: \.isNewline) {
                var entry = line.trimmingCharacters(in: .whitespaces)
                if entry.hasPrefix("#EXT-X-BYTERANGE") {
                    ranged = true
                    continue
                }
                if entry.hasPrefix("#EXT-X-MAP:"), !entry.contains("BYTERANGE="), let start = entry.range(of: "URI=\""),
                    let end = entry[start.upperBound...].firstIndex(of: "\"")
                {
                    entry = String(entry[start.upperBound..<end])
                } else if entry.isEmpty || entry.hasPrefix("#") {
                    continue
                } else if ranged {
                    ranged = false
                    continue
                }
                // Only names in this folder: a playlist's URL may carry a query.
                let name = entry.split(separator: "?").first.map(String.init) ?? entry
                if !name.contains("/") { names.insert(name) }
            }
        }
        return names
    }
}
