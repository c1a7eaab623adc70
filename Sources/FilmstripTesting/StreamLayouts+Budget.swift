public import FilmstripFormats
import FilmstripStreaming
import Foundation

/// Byte budgets: what a picture from a stream needs over HTTP, and what a loopback server sent.
extension StreamLayouts {
    /// The bytes a picture at `t` of `layout` needs besides its manifests, read from the local copy of the stream:
    /// the segment (or byte range) that holds `t`, its initialisation section, a DASH `SegmentBase` index, and the
    /// 16-byte key of AES-128 segments; with that segment.
    public static func segmentBytesNeeded(
        _ layout: StreamLayout, at t: Double
    ) async throws -> (bytes: Int, segment: SegmentReference) {
        let local = StreamingClient(url: try manifest(layout))
        let timeline = try await local.timeline()
        guard let index = timeline.segmentIndex(containing: t) else { throw FixtureError("no segment holds \(t) s") }
        let segment = timeline.segments[index]
        var needed = try await local.media(segment).count + (try await local.initialization(for: segment).count)
        if segment.key != nil { needed += 16 }
        if case .segmentBase(let base) = timeline.renditions[0].segments { needed += base.indexRange.count }
        return (needed, segment)
    }

    /// The bytes `server` sent for every path under `prefix`, and for the manifests (`.m3u8`, `.mpd`) among them.
    public static func bytesSent(by server: LoopbackServer, under prefix: String = "/") -> (all: Int, manifests: Int) {
        let paths = Set(server.requests.map(\.path).filter { $0.hasPrefix(prefix) })
        let manifests = paths.filter { $0.hasSuffix(".m3u8") || $0.hasSuffix(".mpd") }
        return (
            paths.reduce(0) { $0 + server.bytesSent($1) }, manifests.reduce(0) { $0 + server.bytesSent($1) }
        )
    }
}
