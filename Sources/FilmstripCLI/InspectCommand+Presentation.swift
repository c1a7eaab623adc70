import Filmstrip
import Foundation

/// `filmstrip inspect` on an HLS playlist or a DASH MPD: the presentation model.
struct PresentationReport {
    struct RenditionReport {
        var rendition: Presentation.Rendition
        var segments: [SegmentReference]
    }

    var presentation: Presentation
    /// Per period, per track, per rendition.
    var renditions: [[[RenditionReport]]]
    /// The span available now, for live presentations.
    var liveWindow: (start: Double, end: Double)?

    /// Loads the manifest and the segment list of every rendition (media playlists and segment indexes included).
    static func load(_ url: URL, policy: AddressPolicy) async throws -> PresentationReport {
        let client = StreamingClient(
            url: url, configuration: LoadingConfiguration(maximumResponseSize: 256 << 20, addressPolicy: policy))
        var presentation = try await client.presentation()
        var periods: [[[RenditionReport]]] = []
        for period in presentation.periods {
            var tracks: [[RenditionReport]] = []
            for track in period.tracks {
                var reports: [RenditionReport] = []
                for rendition in track.renditions {
                    reports.append(
                        RenditionReport(
                            rendition: rendition, segments: try await client.segments(of: rendition, in: presentation)))
                }
                tracks.append(reports)
            }
            periods.append(tracks)
        }
        var window: (Double, Double)?
        if let timeline = try? await client.timeline() {
            presentation.isLive = timeline.presentation.isLive
            presentation.duration = timeline.presentation.duration
            if presentation.isLive { window = (timeline.start, timeline.end) }
        }
        return PresentationReport(presentation: presentation, renditions: periods, liveWindow: window)
    }

    var text: String {
        let p = presentation
        var lines: [String] = []
        var head = "\(p.streamingProtocol == .hls ? "HLS" : "DASH") presentation, \(p.isLive ? "live" : "on demand")"
        if let duration = p.duration { head += ", duration \(Self.seconds(duration))" }
        lines.append(head)
        if let window = liveWindow {
            lines.append("  live window: \(Self.seconds(window.start)) to \(Self.seconds(window.end))")
        }
        for (name, value) in [
            ("availability start", p.availabilityStartTime.map { ISO8601DateFormatter().string(from: $0) }),
            ("minimum update period", p.minimumUpdatePeriod.map(Self.seconds)),
            ("time-shift buffer", p.timeShiftBufferDepth.map(Self.seconds)),
            ("suggested delay", p.suggestedPresentationDelay.map(Self.seconds)),
        ] {
            if let value { lines.append("  \(name): \(value)") }
        }
        for (pi, period) in p.periods.enumerated() {
            var line =
                "period \(pi + 1)\(period.id.map { " (id \($0))" } ?? ""): starts at \(Self.seconds(period.start))"
            if let duration = period.duration { line += ", lasts \(Self.seconds(duration))" }
            lines.append(line)
            for (ti, track) in period.tracks.enumerated() {
                var t = "  \(track.kind.rawValue) track"
                var traits: [String] = []
                if let id = track.id { traits.append("id \(id)") }
                if let language = track.language { traits.append("language \(language)") }
                if let name = track.name { traits.append("\"\(name)\"") }
                if !track.roles.isEmpty { traits.append("roles \(track.roles.joined(separator: ","))") }
                if track.isDefault { traits.append("default") }
                if let layout = track.tileLayout { traits.append("tiles \(layout.columns)x\(layout.rows)") }
                if !traits.isEmpty { t += " (" + traits.joined(separator: ", ") + ")" }
                lines.append(t + ":")
                for report in renditions[pi][ti] {
                    let r = report.rendition
                    var parts: [String] = []
                    if let w = r.width, let h = r.height { parts.append("\(w)x\(h)") }
                    if let rate = r.frameRate { parts.append(String(format: "%g fps", rate)) }
                    if r.bandwidth > 0 { parts.append("\(r.bandwidth / 1000) kbit/s") }
                    if let codecs = r.codecs { parts.append(codecs) }
                    if let channels = r.channels { parts.append("\(channels) channels") }
                    let s = Self.segmentSummary(report.segments)
                    parts.append(
                        "\(s.count) segments"
                            + (s.count > 0
                                ? ", \(Self.seconds(s.total)) (\(Self.seconds(s.min))–\(Self.seconds(s.max)) each)"
                                : ""))
                    if s.byteRanges { parts.append("byte ranges") }
                    if s.encrypted { parts.append("AES-128") }
                    if s.discontinuities > 0 { parts.append("\(s.discontinuities) discontinuities") }
                    lines.append("    \(Self.shortName(r.id, base: p.url)): " + parts.joined(separator: ", "))
                }
            }
        }
        return lines.joined(separator: "\n")
    }

    var json: JSON {
        let p = presentation
        func optional(_ value: Double?) -> JSON { value.map(JSON.double) ?? .null }
        func optional(_ value: String?) -> JSON { value.map(JSON.string) ?? .null }
        func optional(_ value: Int?) -> JSON { value.map(JSON.int) ?? .null }
        var periods: [JSON] = []
        for (pi, period) in p.periods.enumerated() {
            var tracks: [JSON] = []
            for (ti, track) in period.tracks.enumerated() {
                let renditionList: [JSON] = renditions[pi][ti].map { report in
                    let r = report.rendition
                    let s = Self.segmentSummary(report.segments)
                    return .object([
                        ("id", .string(r.id)), ("bandwidth", .int(r.bandwidth)), ("codecs", optional(r.codecs)),
                        ("mime_type", optional(r.mimeType)), ("width", optional(r.width)),
                        ("height", optional(r.height)), ("frame_rate", optional(r.frameRate)),
                        ("channels", optional(r.channels)),
                        (
                            "segments",
                            .object([
                                ("count", .int(s.count)), ("duration", .double(s.total)),
                                ("min_duration", .double(s.min)), ("max_duration", .double(s.max)),
                                ("byte_ranges", .bool(s.byteRanges)), ("encrypted", .bool(s.encrypted)),
                                ("discontinuities", .int(s.discontinuities)),
                                ("initialization", optional(report.segments.first?.initialization?.url.absoluteString)),
                            ])
                        ),
                    ])
                }
                tracks.append(
                    .object([
                        ("kind", .string(track.kind.rawValue)), ("id", optional(track.id)),
                        ("language", optional(track.language)), ("name", optional(track.name)),
                        ("roles", .array(track.roles.map(JSON.string))), ("default", .bool(track.isDefault)),
                        ("renditions", .array(renditionList)),
                    ]))
            }
            periods.append(
                .object([
                    ("id", optional(period.id)), ("start", .double(period.start)),
                    ("duration", optional(period.duration)),
                    ("tracks", .array(tracks)),
                ]))
        }
        let iso = ISO8601DateFormatter()
        return .object([
            ("protocol", .string(p.streamingProtocol.rawValue)), ("url", .string(p.url.absoluteString)),
            ("live", .bool(p.isLive)), ("duration", optional(p.duration)),
            ("availability_start_time", optional(p.availabilityStartTime.map { iso.string(from: $0) })),
            ("minimum_update_period", optional(p.minimumUpdatePeriod)),
            ("time_shift_buffer_depth", optional(p.timeShiftBufferDepth)),
            ("suggested_presentation_delay", optional(p.suggestedPresentationDelay)),
            (
                "live_window",
                liveWindow.map { JSON.object([("start", .double($0.start)), ("end", .double($0.end))]) } ?? .null
            ),
            ("periods", .array(periods)),
        ])
    }

    static func segmentSummary(
        _ segments: [SegmentReference]
    ) -> (
        count: Int, total: Double, min: Double, max: Double, byteRanges: Bool, encrypted: Bool, discontinuities: Int
    ) {
        let durations = segments.map(\.duration)
        var discontinuities = 0
        for (a, b) in zip(segments, segments.dropFirst()) where a.discontinuitySequence != b.discontinuitySequence {
            discontinuities += 1
        }
        return (
            segments.count, durations.reduce(0, +), durations.min() ?? 0, durations.max() ?? 0,
            segments.contains { $0.byteRange != nil }, segments.contains { $0.key != nil }, discontinuities
        )
    }

    static func seconds(_ value: Double) -> String { String(format: "%.3f s", value) }

    /// A rendition id that is a URL, shortened to its path relative to the manifest's directory.
    static func shortName(_ id: String, base: URL) -> String {
        let directory = base.deletingLastPathComponent().absoluteString
        return id.hasPrefix(directory) ? String(id.dropFirst(directory.count)) : id
    }
}
