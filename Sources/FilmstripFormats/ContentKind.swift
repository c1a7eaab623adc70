public import Foundation

/// What a document holds, told by its content, never by its name (a `.vtt` that holds a playlist is a playlist):
/// the one content sniffer that thumbnail tracks, manifests and the CLI share.
public enum ContentKind: String, Sendable, Hashable {
    /// A WebVTT track (`WEBVTT`, after an optional byte-order mark).
    case webVTT = "webvtt"
    /// An HLS playlist (`#EXTM3U`): media or master.
    case hlsPlaylist = "hls"
    /// XML, which may be an MPD (the MPD parser names any other root).
    case mpd = "dash"
    /// A Roku BIF archive (its magic number).
    case bif
    /// A JSON document (storyboard).
    case json

    /// How far into a document its first meaningful byte is looked for (byte-order mark and white space first).
    static let window = 1024

    /// The kind of `data` from its first bytes, or `nil` when it is none of them.
    public static func detect(_ data: Data) -> ContentKind? {
        let head = Array(data.prefix(window))
        if head.starts(with: BIFParser.magic) { return .bif }
        var i = 0
        if head.count >= 3, head[0] == 0xEF, head[1] == 0xBB, head[2] == 0xBF { i = 3 }
        if head[i...].starts(with: Array("WEBVTT".utf8)) { return .webVTT }
        while i < head.count, head[i] == 0x20 || head[i] == 0x09 || head[i] == 0x0A || head[i] == 0x0D { i += 1 }
        let rest = head[i...]
        if rest.starts(with: Array("#EXTM3U".utf8)) { return .hlsPlaylist }
        if rest.first == 0x7B || rest.first == 0x5B { return .json }  // { or [
        if rest.first == 0x3C { return .mpd }  // <
        return nil
    }

    /// Whether it is a streaming manifest (an HLS playlist or an MPD).
    public var isManifest: Bool { self == .hlsPlaylist || self == .mpd }
}
