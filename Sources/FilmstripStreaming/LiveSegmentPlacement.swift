public import FilmstripFormats

/// Keeps a live HLS stream's timeline steady across playlist reloads.
///
/// Each version of a live playlist starts its references at 0, but the window slides. Here a media sequence number
/// keeps the start it had when it was first seen, so positions keep their meaning as the window moves. Renditions of
/// one stream share a placement: RFC 8216 requires their sequence numbers to be aligned. A playlist that shares no
/// number with what was seen (the window moved on while nobody looked) is placed after the newest known segment,
/// spaced by its own mean segment duration.
///
/// ```swift
/// var placement = LiveSegmentPlacement()
/// let first = placement.place(try await client.segmentList(of: rendition, in: presentation).references)
/// let later = placement.place(try await client.segmentList(of: rendition, in: presentation, reload: true).references)
/// // A segment in both lists has the same start in both.
/// ```
public struct LiveSegmentPlacement: Sendable, Hashable, Codable {
    private var starts: [Int: Double] = [:]

    /// An empty placement: the first list placed keeps its own times.
    public init() {}

    /// `references` with their starts moved onto the steady timeline (durations and everything else unchanged).
    public mutating func place(_ references: [SegmentReference]) -> [SegmentReference] {
        guard let first = references.first else { return references }
        var anchorIndex = 0
        var anchorStart = first.start
        if let known = references.indices.first(where: { starts[references[$0].number] != nil }) {
            anchorIndex = known
            anchorStart = starts[references[known].number]!
        } else if let newest = starts.keys.max(), let newestStart = starts[newest] {
            let mean = references.reduce(0) { $0 + $1.duration } / Double(references.count)
            anchorStart = newestStart + Double(first.number - newest) * max(mean, 0.001)
        }
        var placed = references
        placed[anchorIndex].start = anchorStart
        if anchorIndex > 0 {
            for i in stride(from: anchorIndex - 1, through: 0, by: -1) {
                placed[i].start = placed[i + 1].start - placed[i].duration
            }
        }
        for i in (anchorIndex + 1)..<max(anchorIndex + 1, placed.count) {
            placed[i].start = placed[i - 1].end
        }
        for reference in placed { starts[reference.number] = reference.start }
        if starts.count > 4 * placed.count + 64 {
            let oldest = placed[0].number
            starts = starts.filter { $0.key >= oldest }
        }
        return placed
    }
}
