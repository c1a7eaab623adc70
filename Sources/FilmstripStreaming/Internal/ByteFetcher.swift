import FilmstripFormats
import FilmstripLoading
import FilmstripSync
import Foundation

/// Fetches whole resources or byte ranges of them: http(s) through the `DataLoading` transport with one `Range`
/// request per range and retries for transient failures, `file:` from disk. A presentation loaded over the network
/// may not reach local files. Every request and body byte is counted; every http(s) attempt goes through the
/// decorator first.
final class ByteFetcher: Sendable {
    let transport: any DataLoading
    let configuration: LoadingConfiguration
    /// Whether the presentation came from the network (then `file:` URLs are refused).
    let isRemote: Bool
    let decorate: StreamingRequestDecorator?
    private let counters = Mutex((requests: 0, bytes: 0))
    /// Resource sizes learnt from the `Content-Range` of range responses (`bytes a-b/total`).
    private let sizes = Mutex<[URL: Int64]>([:])

    init(
        transport: any DataLoading, configuration: LoadingConfiguration, isRemote: Bool,
        decorate: StreamingRequestDecorator? = nil
    ) {
        self.transport = transport
        self.configuration = configuration
        self.isRemote = isRemote
        self.decorate = decorate
    }

    var statistics: (requests: Int, bytes: Int) { counters.withLock { $0 } }

    /// The bytes of `url` (all of it, or `range`), at most `limit` bytes.
    func fetch(
        _ url: URL, range: Range<Int64>? = nil, limit: Int, object: StreamingRequest.Object,
        segment: SegmentReference? = nil, rendition: Presentation.Rendition? = nil
    ) async throws -> Data {
        try await fetch(
            StreamingRequest(object: object, url: url, byteRange: range, segment: segment, rendition: rendition),
            limit: limit)
    }

    /// The bytes a request asks for, at most `limit` bytes; `timeout` (seconds) bounds both the first byte and the
    /// whole body of this request on its own. With `mayEndEarly`, the range may run past the resource's end (see
    /// ``ByteRangeRequest/mayEndEarly``).
    func fetch(
        _ original: StreamingRequest, limit: Int, timeout: Double? = nil, mayEndEarly: Bool = false
    ) async throws -> Data {
        let url = original.url
        let range = original.byteRange
        let what = original.noun
        let scheme = url.scheme?.lowercased() ?? ""
        if url.isFileURL {
            guard !isRemote else {
                throw StreamingError(
                    .refused, "a remote presentation may not refer to the local file '\(url.path)'", url: url)
            }
            return try readFile(url, range: range, limit: limit, what: what, mayEndEarly: mayEndEarly)
        }
        guard scheme == "http" || scheme == "https" else {
            throw StreamingError(.refused, "unsupported URL scheme '\(scheme)' for the \(what)", url: url)
        }
        if let range, range.count > limit {
            throw StreamingError(.tooLarge, "the \(what) is \(range.count) bytes; the limit is \(limit)", url: url)
        }
        var request = configuration
        request.maximumResponseSize = min(limit, configuration.maximumResponseSize)
        if let timeout {
            request.requestTimeout = min(request.requestTimeout, timeout)
            request.resourceTimeout = min(request.resourceTimeout, timeout)
        }
        do {
            try Task.checkCancellation()
            let wanted = ByteRangeRequest(url: url, range: range, mayEndEarly: mayEndEarly)
            let response = try await transport.load(wanted, configuration: request) {
                [self] attempt in
                counters.withLock { $0.requests += 1 }
                // Each attempt is decorated afresh (CMCD's values as they are now, a URL signed again).
                var described = original
                decorate?(&described)
                attempt.url = described.url
                for (name, value) in described.headers { attempt.headers[name] = value }
            }
            counters.withLock { $0.bytes += response.data.count }
            // Only a 206 tells the resource's size (a 200 here has been cut to the range).
            if range != nil, response.statusCode == 206,
                let total = ByteRangeRequest(url: url, range: range).placement(of: response).total
            {
                sizes.withLock { $0[url] = total }
            }
            return response.data
        } catch let error as LoadingError {
            throw Self.failure(error, what: what)
        } catch is CancellationError {
            throw StreamingError(.cancelled, "cancelled", url: url)
        } catch {
            throw StreamingError(.network, "cannot load the \(what): \(error)", url: url, underlying: error)
        }
    }

    /// `part` of `segment`'s media bytes, counted from its first byte and cut where the segment (its byte range, or
    /// its resource) ends, and whether it reaches that end: one `Range` request, at most `limit` bytes.
    func fetch(
        _ part: Range<Int64>, of segment: SegmentReference, rendition: Presentation.Rendition?, limit: Int
    ) async throws -> (data: Data, reachesEnd: Bool) {
        let base = segment.byteRange?.lowerBound ?? 0
        let (start, startOverflow) = base.addingReportingOverflow(part.lowerBound)
        let (end, endOverflow) = base.addingReportingOverflow(part.upperBound)
        guard !startOverflow, !endOverflow else {
            throw StreamingError(.invalidContent, "the part \(part) of the segment is out of range", url: segment.url)
        }
        var wanted = start..<end
        if let whole = segment.byteRange {
            wanted = wanted.clamped(to: whole)
            guard !wanted.isEmpty else { return (Data(), true) }
        }
        let request = StreamingRequest(
            object: .media, url: segment.url, byteRange: wanted, segment: segment, rendition: rendition)
        let data = try await fetch(request, limit: limit, mayEndEarly: segment.byteRange == nil)
        let stop = segment.byteRange?.upperBound ?? knownSize(of: segment.url)
        let reached = wanted.lowerBound + Int64(data.count)
        return (data, data.count < wanted.count || stop.map { reached >= $0 } == true)
    }

    /// The size of `url` when known: a local file's, or the total a range response of it gave.
    func knownSize(of url: URL) -> Int64? {
        if url.isFileURL {
            return (try? FileManager.default.attributesOfItem(atPath: url.path)[.size] as? NSNumber)?.int64Value
        }
        return sizes.withLock { $0[url] }
    }

    private static func failure(_ error: LoadingError, what: String) -> StreamingError {
        switch error.kind {
        case .tooLarge(let limit):
            return StreamingError(
                .tooLarge, "the \(what) is larger than the limit of \(limit) bytes", url: error.url, underlying: error)
        case .cancelled:
            return StreamingError(.cancelled, "cancelled", url: error.url, underlying: error)
        case .httpStatus(let status):
            return StreamingError(
                .network, "the \(what) \(error.url.absoluteString) answered HTTP \(status)", url: error.url,
                underlying: error)
        default:
            return StreamingError(
                .network, "cannot load the \(what) \(error.url.absoluteString): \(error.message)", url: error.url,
                underlying: error)
        }
    }

    private func readFile(
        _ url: URL, range: Range<Int64>?, limit: Int, what: String, mayEndEarly: Bool
    ) throws(StreamingError) -> Data {
        if let problem = LocalFile.problem(url) {
            throw StreamingError(.network, "cannot open the \(what): \(problem) '\(url.path)'", url: url)
        }
        guard let handle = FileHandle(forReadingAtPath: url.path) else {
            throw StreamingError(.network, "cannot open the \(what): unreadable file '\(url.path)'", url: url)
        }
        defer { try? handle.close() }
        do {
            let size = Int64(try handle.seekToEnd())
            var wanted = range ?? 0..<size
            if mayEndEarly, wanted.lowerBound < size { wanted = wanted.clamped(to: 0..<size) }
            guard wanted.upperBound <= size else {
                throw StreamingError(
                    .network,
                    "the \(what) at bytes \(wanted.lowerBound)..<\(wanted.upperBound) is past the end of "
                        + "the \(size)-byte file", url: url)
            }
            guard wanted.count <= limit else {
                throw StreamingError(.tooLarge, "the \(what) is \(wanted.count) bytes; the limit is \(limit)", url: url)
            }
            try handle.seek(toOffset: UInt64(wanted.lowerBound))
            let data = try handle.read(upToCount: Int(wanted.count)) ?? Data()
            counters.withLock {
                $0.requests += 1
                $0.bytes += data.count
            }
            return data
        } catch let error as StreamingError {
            throw error
        } catch {
            throw StreamingError(.network, "cannot read the \(what) from '\(url.path)'", url: url, underlying: error)
        }
    }
}
