import FilmstripFormats
public import Foundation

/// The videos in a folder tree, as a person would count them.
///
/// A video is a regular file with a video extension (``videoExtensions``). Hidden files and folders are skipped,
/// and so is every file an HLS playlist in the tree lists, wherever it lies: the `.ts` pieces of a stream the
/// `ffmpeg` CLI wrote are not videos of their own. A file addressed by byte ranges (ffmpeg's single-file mode) holds
/// the whole stream and stays a video. With `includingStreams`, the streams themselves are counted instead: every
/// DASH MPD, and every HLS playlist no other playlist lists (a master, or a media playlist on its own), and a file
/// addressed by byte ranges is then its playlist's media, not a second video.
public enum VideoFolder {
    /// File extensions taken as videos.
    public static let videoExtensions: Set<String> = [
        "mp4", "m4v", "mov", "mkv", "webm", "ts", "m2ts", "mts", "avi", "mpg", "mpeg", "ogv", "flv", "3gp",
    ]

    /// File extensions of sound alone, taken with `includingAudio` (a library shows them with their cover picture).
    public static let audioExtensions: Set<String> = ["m4a", "mp3", "flac", "opus", "oga", "wav"]

    /// Every video under `directory` (standardized file URLs), sorted by path; with `includingAudio`, files of sound
    /// alone too (those a playlist lists are its segments, not files of their own).
    public static func videos(
        under directory: URL, includingStreams: Bool = false, includingAudio: Bool = false
    )
        -> [URL]
    {
        guard
            let walker = FileManager.default.enumerator(
                at: directory, includingPropertiesForKeys: [.isRegularFileKey],
                options: [.skipsHiddenFiles, .skipsPackageDescendants])
        else { return [] }
        var files: [URL] = []
        var playlists: [URL] = []
        var manifests: [URL] = []
        for case let url as URL in walker {
            let kind = url.pathExtension.lowercased()
            if videoExtensions.contains(kind) || (includingAudio && audioExtensions.contains(kind)) {
                files.append(url.standardizedFileURL)
            } else if kind == "m3u8" {
                playlists.append(url.standardizedFileURL)
            } else if kind == "mpd" {
                manifests.append(url.standardizedFileURL)
            }
        }
        var listed: Set<String> = []
        for playlist in playlists { listed.formUnion(referencedPaths(in: playlist, ranged: includingStreams)) }
        // A stream's pieces that an MPD names (the files of its single-file Representations, say) belong to it.
        if includingStreams { for manifest in manifests { listed.formUnion(referencedPaths(inMPD: manifest)) } }
        var found = files.filter { !listed.contains($0.path) }
        if includingStreams {
            found += playlists.filter { !listed.contains($0.path) && playsMedia(playlist: $0) }
            found += manifests.filter(playsMedia(mpd:))
        }
        return found.sorted { $0.path.localizedStandardCompare($1.path) == .orderedAscending }
    }

    /// The local files an HLS playlist of at most 4 MB lists (segments, `EXT-X-MAP` sections, variant, rendition and
    /// I-frame playlists), as standardized paths, relative URIs resolved against the playlist's folder. Files
    /// addressed by byte ranges, which each hold a whole stream, are left out unless `ranged`.
    public static func referencedPaths(in playlist: URL, ranged includeRanged: Bool = false) -> Set<String> {
        guard let size = (try? FileManager.default.attributesOfItem(atPath: playlist.path))?[.size] as? NSNumber,
            size.intValue <= 4 << 20, let text = try? String(contentsOf: playlist, encoding: .utf8)
        else { return [] }
        let folder = playlist.deletingLastPathComponent()
        var paths: Set<String> = []
        func add(_ uri: Substring) {
            let reference = uri.split(separator: "?").first.map(String.init) ?? String(uri)
            guard !reference.isEmpty, !reference.contains("://") else { return }
            let url =
                reference.hasPrefix("/")
                ? URL(fileURLWithPath: reference) : folder.appendingPathComponent(reference)
            paths.insert(url.standardizedFileURL.path)
        }
        var ranged = false
        for line in text.split(whereSeparator: \.isNewline) {
            let entry = line.trimmingCharacters(in: .whitespaces)
            if entry.hasPrefix("#EXT-X-BYTERANGE") {
                ranged = true
            } else if entry.hasPrefix("#") {
                // URI="…" of EXT-X-MAP (unless ranged), EXT-X-MEDIA, EXT-X-I-FRAME-STREAM-INF and the like.
                guard includeRanged || !entry.contains("BYTERANGE="), let start = entry.range(of: "URI=\""),
                    let end = entry[start.upperBound...].firstIndex(of: "\"")
                else { continue }
                add(entry[start.upperBound..<end][...])
            } else if !entry.isEmpty {
                if !ranged || includeRanged { add(entry[...]) }
                ranged = false
            }
        }
        return paths
    }

    /// The local files an MPD of at most 4 MB names: its `BaseURL`s, `SegmentURL@media`, `initialization` and
    /// `sourceURL` (templates with `$` identifiers name no one file), as standardized paths resolved against the MPD's
    /// folder (a BaseURL chain is not followed: the files ffmpeg and packagers write sit beside their MPD or below).
    public static func referencedPaths(inMPD manifest: URL) -> Set<String> {
        guard let size = (try? FileManager.default.attributesOfItem(atPath: manifest.path))?[.size] as? NSNumber,
            size.intValue <= 4 << 20, let text = try? String(contentsOf: manifest, encoding: .utf8)
        else { return [] }
        let folder = manifest.deletingLastPathComponent()
        var paths: Set<String> = []
        func add(_ reference: Substring) {
            let name = reference.trimmingCharacters(in: .whitespacesAndNewlines)
                .replacingOccurrences(of: "&amp;", with: "&")
            guard !name.isEmpty, !name.contains("://"), !name.contains("$") else { return }
            let url = name.hasPrefix("/") ? URL(fileURLWithPath: name) : folder.appendingPathComponent(name)
            paths.insert(url.standardizedFileURL.path)
        }
        var rest = text[...]
        while let open = rest.range(of: "<BaseURL") {
            guard let close = rest[open.upperBound...].firstIndex(of: ">"),
                let end = rest[close...].range(of: "</BaseURL>")
            else { break }
            add(rest[rest.index(after: close)..<end.lowerBound])
            rest = rest[end.upperBound...]
        }
        for attribute in ["media=\"", "initialization=\"", "sourceURL=\""] {
            var rest = text[...]
            while let start = rest.range(of: attribute) {
                guard let end = rest[start.upperBound...].firstIndex(of: "\"") else { break }
                add(rest[start.upperBound..<end])
                rest = rest[end...]
            }
        }
        return paths
    }

    /// Whether a playlist is one a person watches: not an image or I-frame playlist on its own (a preview track, as
    /// `generate` writes next to a stream).
    static func playsMedia(playlist: URL) -> Bool {
        guard let handle = FileHandle(forReadingAtPath: playlist.path) else { return false }
        defer { try? handle.close() }
        let head = String(decoding: (try? handle.read(upToCount: 64 << 10)) ?? Data(), as: UTF8.self)
        return !head.contains("#EXT-X-IMAGES-ONLY") && !head.contains("#EXT-X-I-FRAMES-ONLY")
    }

    /// Whether an MPD has video or audio (an image-only MPD is a preview track, not a stream).
    static func playsMedia(mpd: URL) -> Bool {
        guard let size = (try? FileManager.default.attributesOfItem(atPath: mpd.path))?[.size] as? NSNumber,
            size.intValue <= 4 << 20, let data = try? Data(contentsOf: mpd),
            let presentation = try? DASHManifestParser().parse(data, url: mpd)
        else { return true }
        return presentation.periods.contains { $0.tracks.contains { $0.kind == .video || $0.kind == .audio } }
    }
}
