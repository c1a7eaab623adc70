import FilmstripFormats
import FilmstripLoading
import Foundation

/// WebM Representations, whose `SegmentBase` index is the file's `Cues`.
extension StreamingClient {
    /// The subsegments a WebM `Cues` index lists; the initialisation section (fetched once, as every reader of the
    /// Representation needs it) gives the `Segment`'s data offset and timestamp scale.
    func webMSegments(_ index: SegmentBaseIndex, cues: Data) async throws -> [SegmentReference] {
        let reference = SegmentReference(
            start: index.periodStart, duration: 0, reference: index.url.absoluteString, baseURL: index.url,
            initialization: index.initialization)
        let head = try await initialization(for: reference)
        // Cues before the clusters leave the last one's end open: the resource's size (a local file's, or the total
        // the init or Cues range response gave), else a bounded range.
        let size = fetcher.knownSize(of: index.url)
        let parsed: WebMCues
        do {
            parsed = try WebMCues.parse(
                initialization: head, cues: cues, cuesOffset: index.indexRange.lowerBound, end: size,
                lastSpan: Int64(limits.maximumSegmentBytes))
        } catch {
            throw StreamingError(
                .invalidContent, "the segment index is unusable: \(error)", url: index.url, underlying: error)
        }
        return SegmentBaseReferences.make(parsed, index: index)
    }
}
