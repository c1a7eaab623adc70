public import FilmstripFormats
import FilmstripLoading
public import Foundation

/// MPEG-TS byte ranges that start after their resource's program tables.
extension StreamingClient {
    /// The program tables an MPEG-TS byte range lacks. When `segment` is a range that starts inside its resource and
    /// names no initialisation section, and `media` (its bytes) is MPEG-TS that reaches its first PES before any PAT,
    /// the PAT and PMT are read from the head of the resource (one small `Range` request per resource, kept);
    /// otherwise nothing is fetched and the answer is empty. Put the answer before `media` for a demuxer.
    public func programTables(
        for segment: SegmentReference, media: Data, of rendition: Presentation.Rendition? = nil
    ) async throws -> Data {
        guard segment.initialization == nil, segment.key == nil, let range = segment.byteRange, range.lowerBound > 0,
            TransportStreamTables.isTransportStream(media), !TransportStreamTables.beginsWithTables(media)
        else { return Data() }
        let size = Int64(TransportStreamTables.packetSize)
        // The tables open a resource, before the range: its first 16 packets, or what comes before the range. The
        // head is kept per resource and size (ranges of one resource that start early get a shorter head).
        let head = min(16 * size, range.lowerBound / size * size)
        guard head > 0 else { return Data() }
        let url = segment.url
        let key = URL(string: "#head-\(head)", relativeTo: url)?.absoluteURL ?? url
        let bytes = try await shared(key, in: \.programTables, url: url) { [self] () async throws -> Data in
            try await fetcher.fetch(
                url, range: 0..<head, limit: limits.maximumSegmentBytes, object: .initialization,
                segment: segment, rendition: rendition)
        }
        // A range that starts at the PMT, after the PAT alone: the head's PAT with the range's own PMT.
        let found =
            TransportStreamTables.tables(in: bytes)
            ?? TransportStreamTables.tables(in: bytes + media.prefix(16 * TransportStreamTables.packetSize))
        guard let tables = found else {
            throw StreamingError(
                .invalidContent,
                "the MPEG-TS range \(range.lowerBound)-\(range.upperBound - 1) starts after its resource's PAT and "
                    + "PMT, names no EXT-X-MAP, and neither the resource's first \(head) bytes nor the range hold "
                    + "them", url: url)
        }
        return tables
    }
}
