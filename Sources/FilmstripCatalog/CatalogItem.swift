import FilmstripMedia
public import Foundation

/// One video of a catalog.
public struct CatalogItem: Sendable, Hashable {
    /// The input as the list gave it: a path or URL as written, or a path relative to the listed folder. The
    /// results, `catalog status` and the index name the item by it.
    public var input: String
    /// Where the video is read from.
    public var url: URL

    /// Creates an item.
    public init(input: String, url: URL) {
        self.input = input
        self.url = url
    }
}

/// Reads the list of a catalog: a text file of paths and URLs, or a folder.
///
/// In a text file each line is a path or an `http(s)` or `file` URL; blank lines and lines starting with `#` are
/// skipped, and so is a repeated line (a `#` inside a line is part of it). A relative path is relative to the list's
/// own folder, so a list on shared storage means the same videos on every node. A folder lists every video under it
/// and every stream (a DASH MPD, an HLS playlist no other playlist lists), but not the segments a playlist lists
/// (``VideoFolder``), each named by its path relative to the folder.
public enum CatalogList {
    /// The most items a list may hold.
    public static let maximumItems = 10_000_000

    /// The items of the list file or folder at `location`.
    public static func read(_ location: URL) throws(CatalogError) -> [CatalogItem] {
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: location.path, isDirectory: &isDirectory) else {
            throw CatalogError(.invalidList, "no such list file or folder", url: location)
        }
        if isDirectory.boolValue {
            let root = location.standardizedFileURL
            return VideoFolder.videos(under: root, includingStreams: true).map { url in
                CatalogItem(input: String(url.path.dropFirst(root.path.count).drop { $0 == "/" }), url: url)
            }
        }
        let data: Data
        do {
            data = try Data(contentsOf: location)
        } catch {
            throw CatalogError(.invalidList, "cannot read the list", url: location, underlying: error)
        }
        guard let text = String(data: data, encoding: .utf8) else {
            throw CatalogError(.invalidList, "the list is not UTF-8 text", url: location)
        }
        return try parse(text, relativeTo: location.deletingLastPathComponent(), list: location)
    }

    /// The items of a list's text; relative paths resolve against `base`.
    public static func parse(
        _ text: String, relativeTo base: URL, list: URL? = nil
    ) throws(CatalogError)
        -> [CatalogItem]
    {
        var items: [CatalogItem] = []
        var seen: Set<String> = []
        var number = 0
        for raw in text.split(omittingEmptySubsequences: false, whereSeparator: \.isNewline) {
            number += 1
            let line = raw.trimmingCharacters(in: .whitespacesAndNewlines)
            guard !line.isEmpty, !line.hasPrefix("#"), seen.insert(line).inserted else { continue }
            guard items.count < maximumItems else {
                throw CatalogError(.invalidList, "more than \(maximumItems) items", url: list, line: number)
            }
            guard !line.contains("\0") else {
                throw CatalogError(.invalidList, "a NUL byte in the line", url: list, line: number)
            }
            items.append(CatalogItem(input: line, url: try url(for: line, relativeTo: base, list: list, line: number)))
        }
        return items
    }

    private static func url(
        for line: String, relativeTo base: URL, list: URL?, line number: Int
    )
        throws(CatalogError) -> URL
    {
        // A URL has a scheme and "://" (or is a data: URL); anything else, colons included, is a path.
        if let colon = line.firstIndex(of: ":"), line[..<colon].count > 1,
            line[..<colon].allSatisfy({ $0.isLetter || $0.isNumber || "+-.".contains($0) }),
            line[colon...].hasPrefix("://") || line[..<colon].lowercased() == "data"
        {
            let scheme = line[..<colon].lowercased()
            guard ["http", "https", "file"].contains(scheme), let url = URL(string: line),
                url.host != nil || scheme == "file"
            else {
                throw CatalogError(
                    .invalidList, "\"\(line)\" is not a path or an http(s) or file URL", url: list, line: number)
            }
            return scheme == "file" ? url.standardizedFileURL : url
        }
        if line.hasPrefix("/") { return URL(fileURLWithPath: line).standardizedFileURL }
        return URL(fileURLWithPath: base.standardizedFileURL.path + "/" + line).standardizedFileURL
    }
}
