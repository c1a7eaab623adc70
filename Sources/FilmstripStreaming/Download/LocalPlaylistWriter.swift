import FilmstripFormats
import Foundation

/// Writes a download's HLS playlists (RFC 8216, version 7): one media playlist per stored rendition, naming stored
/// files by relative path, and the master that names them. HLS for every source: DASH periods become discontinuities,
/// byte ranges their own files.
struct LocalPlaylistWriter {
    /// One segment of a media playlist.
    struct Entry {
        var duration: Double
        var path: String
        var discontinuity: Bool
        var initialization: String?
        var key: Key?
        var isGap = false
    }

    /// An AES-128 key, stored beside the download.
    struct Key: Hashable {
        var method: String
        var path: String
        var iv: [UInt8]?
    }

    private var keyPaths: [URL: String] = [:]

    /// The stored path of the key at `uri`, and whether it is new to this download.
    mutating func keyPath(for uri: URL) -> (String, Bool) {
        if let known = keyPaths[uri] { return (known, false) }
        let path = "keys/\(keyPaths.count + 1).key"
        keyPaths[uri] = path
        return (path, true)
    }

    static func mediaPlaylist(_ entries: [Entry], iFramesOnly: Bool) -> String {
        // EXTINF rounded to the nearest integer may not exceed the target duration (RFC 8216 4.3.3.1); durations come
        // from the source's manifest, so an absurd one is bounded rather than trusted.
        let longest = entries.map(\.duration).filter(\.isFinite).max() ?? 1
        let target = Int(min(max(1, longest.rounded(.up)), 1e9))
        var lines = [
            "#EXTM3U", "#EXT-X-VERSION:7", "#EXT-X-TARGETDURATION:\(target)", "#EXT-X-MEDIA-SEQUENCE:0",
            "#EXT-X-PLAYLIST-TYPE:VOD",
        ]
        if iFramesOnly { lines.append("#EXT-X-I-FRAMES-ONLY") }
        var initialization: String?
        var key: Key?
        for entry in entries {
            if entry.discontinuity { lines.append("#EXT-X-DISCONTINUITY") }
            // The key first: an init section under a key is decrypted with it (RFC 8216 4.3.2.5).
            if entry.key != key {
                if let next = entry.key {
                    var line = "#EXT-X-KEY:METHOD=\(next.method),URI=\"\(next.path)\""
                    if let iv = next.iv { line += ",IV=0x" + iv.map { String(format: "%02X", $0) }.joined() }
                    lines.append(line)
                } else {
                    lines.append("#EXT-X-KEY:METHOD=NONE")
                }
                key = entry.key
            }
            if let map = entry.initialization, map != initialization || entry.discontinuity {
                lines.append("#EXT-X-MAP:URI=\"\(map)\"")
                initialization = map
            }
            if entry.isGap { lines.append("#EXT-X-GAP") }
            lines.append("#EXTINF:\(String(format: "%.6f", entry.duration)),")
            lines.append(entry.path)
        }
        lines.append("#EXT-X-ENDLIST")
        return lines.joined(separator: "\n") + "\n"
    }

    /// The master: the video variant (or, for audio alone, the first audio playlist as the variant), the audio
    /// renditions in one group, the I-frame stream.
    static func master(
        video: ([Presentation.Rendition], String)?,
        audio: [(Presentation.Track?, [Presentation.Rendition], String)],
        iFrames: ([Presentation.Rendition], String)?
    ) -> String {
        var lines = ["#EXTM3U", "#EXT-X-VERSION:7"]
        let audioBandwidth = audio.map { $0.1.map(\.bandwidth).max() ?? 0 }.max() ?? 0
        for (index, (track, renditions, path)) in audio.enumerated() where video != nil {
            var attributes = ["TYPE=AUDIO", "GROUP-ID=\"audio\""]
            let name = track?.name ?? track?.language ?? "audio \(index + 1)"
            attributes.append("NAME=\"\(quoted(name))\"")
            if let language = track?.language { attributes.append("LANGUAGE=\"\(quoted(language))\"") }
            attributes.append(index == 0 ? "DEFAULT=YES,AUTOSELECT=YES" : "DEFAULT=NO,AUTOSELECT=YES")
            if let channels = renditions.first?.channels { attributes.append("CHANNELS=\"\(quoted(channels))\"") }
            attributes.append("URI=\"\(path)\"")
            lines.append("#EXT-X-MEDIA:" + attributes.joined(separator: ","))
        }
        if let (renditions, path) = video {
            var attributes = variantAttributes(renditions, extra: audioBandwidth)
            // Every codec the variant holds: each period's video, and the audio renditions'.
            if renditions.allSatisfy({ $0.codecs != nil }) {
                let codecs = codecList(renditions.compactMap(\.codecs) + audio.flatMap { $0.1.compactMap(\.codecs) })
                attributes.append("CODECS=\"\(quoted(codecs))\"")
            }
            if !audio.isEmpty { attributes.append("AUDIO=\"audio\"") }
            lines += ["#EXT-X-STREAM-INF:" + attributes.joined(separator: ","), path]
        } else if let (_, renditions, path) = audio.first {
            lines += ["#EXT-X-STREAM-INF:" + variantAttributes(renditions, extra: 0).joined(separator: ","), path]
        }
        if let (renditions, path) = iFrames {
            var attributes = variantAttributes(renditions, extra: 0)
            if renditions.allSatisfy({ $0.codecs != nil }) {
                attributes.append("CODECS=\"\(quoted(codecList(renditions.compactMap(\.codecs))))\"")
            }
            attributes.append("URI=\"\(path)\"")
            lines.append("#EXT-X-I-FRAME-STREAM-INF:" + attributes.joined(separator: ","))
        }
        return lines.joined(separator: "\n") + "\n"
    }

    private static func variantAttributes(_ renditions: [Presentation.Rendition], extra: Int) -> [String] {
        let bandwidth = (renditions.map(\.bandwidth).max() ?? 0) + extra
        var attributes = ["BANDWIDTH=\(max(1, bandwidth))"]
        if let largest = renditions.max(by: { $0.pixelCount < $1.pixelCount }), let width = largest.width,
            let height = largest.height
        {
            attributes.append("RESOLUTION=\(width)x\(height)")
        }
        return attributes
    }

    /// The distinct codecs of `lists` (each a `CODECS` value, comma-separated), in order.
    private static func codecList(_ lists: [String]) -> String {
        var seen = Set<String>()
        return lists.flatMap { $0.split(separator: ",") }.map { $0.trimmingCharacters(in: .whitespaces) }
            .filter { !$0.isEmpty && seen.insert($0).inserted }.joined(separator: ",")
    }

    /// Text for a quoted attribute: no quotes, no line breaks.
    private static func quoted(_ text: String) -> String {
        String(text.filter { $0 != "\"" && !$0.isNewline })
    }
}
