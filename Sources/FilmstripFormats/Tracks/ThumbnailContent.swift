public import Foundation

/// What a thumbnail source holds, told by its content, never by its name: a `.vtt` that holds a playlist is a
/// playlist.
public enum ThumbnailContent: String, Sendable, Hashable {
    /// A WebVTT track (`WEBVTT`, after an optional byte-order mark).
    case webVTT = "webvtt"
    /// An HLS playlist (`#EXTM3U`): an image media playlist, or a master that lists image streams.
    case hlsPlaylist = "hls"
    /// XML whose root may be an MPD.
    case mpd = "dash"
    /// A Roku BIF archive (its magic number).
    case bif
    /// A JSON document (storyboard).
    case json

    /// The kind of `data`, or `nil` when it is none of them.
    public static func detect(_ data: Data) -> ThumbnailContent? {
        let head = Array(data.prefix(64))
        if head.starts(with: BIFParser.magic) { return .bif }
        var i = 0
        if head.count >= 3, head[0] == 0xEF, head[1] == 0xBB, head[2] == 0xBF { i = 3 }
        let afterBOM = head[i...]
        if afterBOM.starts(with: Array("WEBVTT".utf8)) { return .webVTT }
        while i < head.count, head[i] == 0x20 || head[i] == 0x09 || head[i] == 0x0A || head[i] == 0x0D { i += 1 }
        let rest = head[i...]
        if rest.starts(with: Array("#EXTM3U".utf8)) { return .hlsPlaylist }
        if rest.first == 0x7B || rest.first == 0x5B { return .json }  // { or [
        if rest.first == 0x3C { return .mpd }  // <: the MPD parser names any other root
        return nil
    }
}
