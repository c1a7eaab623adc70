public import Foundation

/// Adds generated image tracks to a stream's own manifest: the HLS master (or a master that wraps a media playlist)
/// with one `EXT-X-IMAGE-STREAM-INF` per width, or the MPD with an image AdaptationSet in every Period. The result is
/// written into the output directory beside the sheets, so every reference the stream's manifest makes is rewritten
/// to resolve from there: relative for a local stream, absolute for a remote one.
///
/// ```swift
/// let master = try StreamAttachment.hlsMaster(
///     playlistText, url: streamURL, directory: outputDirectory,
///     imageStreams: [StreamAttachment.ImageStream(line: imageStreamInf)])
/// ```
public enum StreamAttachment {
    /// One image playlist or I-frame image sequence to add to an HLS master: its `EXT-X-IMAGE-STREAM-INF` or
    /// `EXT-X-I-FRAME-STREAM-INF` line, with a `URI` relative to the output directory.
    public struct ImageStream: Sendable, Hashable {
        /// The whole tag line.
        public var line: String

        /// Creates an entry.
        public init(line: String) { self.line = line }
    }

    /// The variant a master gets when the input is a media playlist with no master of its own.
    public struct WrappedVariant: Sendable {
        /// `BANDWIDTH`, bits per second.
        public var bandwidth: Int
        /// `RESOLUTION`, when known.
        public var resolution: PixelSize?
        /// `CODECS`, when known.
        public var codecs: String?

        /// Creates a variant.
        public init(bandwidth: Int, resolution: PixelSize?, codecs: String?) {
            self.bandwidth = bandwidth
            self.resolution = resolution
            self.codecs = codecs
        }

    }

    /// Why a manifest could not be given its tracks.
    public struct Failure: Error, Sendable, Hashable, CustomStringConvertible {
        /// What went wrong.
        public var message: String

        /// Creates a failure.
        public init(_ message: String) { self.message = message }

        public var description: String { message }
    }

    /// The HLS master of `text` (fetched from `url`) with `imageStreams` added after its own lines, every URI made to
    /// resolve from `directory`. A media playlist (no variants) is wrapped in a master with one variant, described
    /// by `wrapping`, pointing at it. Image streams the master already has are kept.
    public static func hlsMaster(
        _ text: String, url: URL, directory: URL, imageStreams: [ImageStream], wrapping: WrappedVariant?
    ) throws(Failure) -> String {
        let rebase = ReferenceRebase(manifest: url, directory: directory)
        let lines = text.split(omittingEmptySubsequences: false) { $0 == "\n" || $0 == "\r\n" || $0 == "\r" }
            .map(String.init)
        guard lines.first?.trimmingCharacters(in: .whitespaces).hasPrefix("#EXTM3U") == true else {
            throw Failure("the playlist does not start with #EXTM3U")
        }
        let isMedia = lines.contains { $0.hasPrefix("#EXTINF") || $0.hasPrefix("#EXT-X-TARGETDURATION") }
        var out: [String]
        if isMedia {
            guard let wrapping else { throw Failure("a media playlist needs a variant description to be wrapped") }
            var inf = "#EXT-X-STREAM-INF:BANDWIDTH=\(max(1, wrapping.bandwidth))"
            if let resolution = wrapping.resolution { inf += ",RESOLUTION=\(resolution.width)x\(resolution.height)" }
            if let codecs = wrapping.codecs, !codecs.isEmpty { inf += ",CODECS=\"\(codecs)\"" }
            out = ["#EXTM3U", inf, rebase.reference(url.lastPathComponent)]
        } else {
            out = []
            for line in lines {
                let trimmed = line.trimmingCharacters(in: .whitespaces)
                if trimmed.isEmpty {
                    out.append("")
                } else if trimmed.hasPrefix("#") {
                    out.append(trimmed.hasPrefix("#EXT") ? rebasedAttributes(trimmed, rebase) : trimmed)
                } else {
                    out.append(rebase.reference(trimmed))
                }
            }
            while out.last == "" { out.removeLast() }
        }
        out += imageStreams.map(\.line)
        return out.joined(separator: "\n") + "\n"
    }

    /// A tag line with its `URI` and `SERVER-URI` attribute values rebased (the attribute list read as RFC 8216
    /// writes it: `NAME=value` pairs separated by commas, quoted strings kept whole).
    private static func rebasedAttributes(_ line: String, _ rebase: ReferenceRebase) -> String {
        guard let colon = line.firstIndex(of: ":") else { return line }
        var result = String(line[...colon])
        var i = line.index(after: colon)
        while i < line.endIndex {
            guard let equals = line[i...].firstIndex(where: { $0 == "=" || $0 == "," }), line[equals] == "=" else {
                result += line[i...]
                break
            }
            let name = line[i..<equals].trimmingCharacters(in: .whitespaces)
            result += line[i...equals]
            var j = line.index(after: equals)
            if j < line.endIndex, line[j] == "\"" {
                let open = j
                j = line.index(after: j)
                let close = line[j...].firstIndex(of: "\"") ?? line.endIndex
                let value = String(line[j..<close])
                result += line[open...open]
                result += name == "URI" || name == "SERVER-URI" ? rebase.reference(value) : value
                if close < line.endIndex { result += "\"" }
                j = close < line.endIndex ? line.index(after: close) : close
            }
            let comma = line[j...].firstIndex(of: ",") ?? line.endIndex
            result += line[j..<comma]
            if comma < line.endIndex { result += "," }
            i = comma < line.endIndex ? line.index(after: comma) : comma
        }
        return result
    }
}

/// Rewrites a manifest's references so that they resolve from another directory: relative paths from there for a
/// local manifest, absolute URLs for a remote one. Absolute references stay as they are.
struct ReferenceRebase {
    let manifest: URL
    let directory: URL
    /// What a relative path reference is prefixed with (empty when the manifest is in the directory).
    let prefix: String

    init(manifest: URL, directory: URL) {
        self.manifest = manifest
        self.directory = directory
        let folder = manifest.deletingLastPathComponent()
        if manifest.isFileURL {
            prefix = Self.relativePath(from: directory, to: folder, isDirectory: true)
        } else {
            prefix = folder.absoluteString
        }
    }

    /// Whether references need no change.
    var isIdentity: Bool { prefix.isEmpty }

    /// `reference` made to resolve from the directory.
    func reference(_ reference: String) -> String {
        guard !reference.isEmpty else { return reference }
        if Self.hasScheme(reference) { return reference }
        if !manifest.isFileURL {
            if let resolved = URL(string: reference, relativeTo: manifest)?.absoluteURL.absoluteString {
                return resolved
            }
            return reference.hasPrefix("/") ? reference : prefix + reference
        }
        // A local manifest: root-relative and network-path references mean the same from anywhere on this host.
        if reference.hasPrefix("/") { return reference }
        return prefix + reference
    }

    /// An absolute URL (a resolved base) as seen from the directory.
    func absolute(_ url: URL) -> String {
        guard url.isFileURL, directory.isFileURL else { return url.absoluteString }
        let isDirectory = url.absoluteString.hasSuffix("/")
        let path = Self.relativePath(from: directory, to: url, isDirectory: isDirectory)
        return path.isEmpty ? "./" : path
    }

    static func hasScheme(_ text: String) -> Bool {
        guard let colon = text.firstIndex(of: ":") else { return false }
        let scheme = text[..<colon]
        guard let first = scheme.first, first.isASCII, first.isLetter else { return false }
        return scheme.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "+" || $0 == "-" || $0 == ".") }
    }

    /// The relative path from directory `from` to `to` (a directory path ends with `/`; the same directory is "").
    static func relativePath(from: URL, to: URL, isDirectory: Bool) -> String {
        let base = from.standardizedFileURL.path.split(separator: "/")
        let target = to.standardizedFileURL.path.split(separator: "/")
        var common = 0
        while common < base.count, common < target.count, base[common] == target[common] { common += 1 }
        let ups = Array(repeating: "..", count: base.count - common)
        let parts = ups + target[common...].map(String.init)
        guard !parts.isEmpty else { return "" }
        let joined = parts.map { $0.addingPercentEncoding(withAllowedCharacters: .urlPathAllowed) ?? $0 }
            .joined(separator: "/")
        return isDirectory ? joined + "/" : joined
    }
}
