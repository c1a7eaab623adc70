public import Foundation

/// A request for a whole resource or a byte range of it: the one place that writes `Range` headers and reads what a
/// server sent back (`206` with `Content-Range`, or a `200` from a server that ignored the header).
///
/// ```swift
/// let request = ByteRangeRequest(url: url, range: 1000..<2000)
/// let bytes = try await transport.load(request, configuration: configuration).data
/// // exactly bytes 1000..<2000, retried as configuration.retry says
/// ```
public struct ByteRangeRequest: Sendable, Hashable {
    /// The resource.
    public var url: URL
    /// The bytes wanted, `start..<end`; `nil` for the whole resource.
    public var range: Range<Int64>?
    /// Whether the answer may stop before `range` does, where the resource ends: a read of "at most these bytes"
    /// of a resource whose size is not known. Off by default: a range is then a promise (an `EXT-X-BYTERANGE`, an
    /// index), and a short body is a truncated one.
    public var mayEndEarly: Bool

    /// A request for `range` of `url` (all of it when `nil`); with `mayEndEarly`, the range may run past the end.
    public init(url: URL, range: Range<Int64>? = nil, mayEndEarly: Bool = false) {
        self.url = url
        self.range = range
        self.mayEndEarly = mayEndEarly
    }

    /// The `Range` header's value (`bytes=a-b`, inclusive), `nil` for the whole resource or an empty range.
    public var rangeHeader: String? {
        guard let range, !range.isEmpty else { return nil }
        return "bytes=\(range.lowerBound)-\(range.upperBound - 1)"
    }

    /// `configuration` with this request's `Range` header (and none left from another request).
    public func applied(to configuration: LoadingConfiguration) -> LoadingConfiguration {
        var configured = configuration
        configured.additionalHeaders["Range"] = rangeHeader
        return configured
    }

    /// Where a response's body lies in the resource: its first byte's offset, and the resource's size when the
    /// response tells it (a `206`'s `Content-Range: bytes a-b/total`, or a `200`'s whole body).
    public func placement(of response: LoadResponse) -> (offset: Int64, total: Int64?) {
        guard response.statusCode == 206 else { return (0, Int64(response.data.count)) }
        let parsed = Self.contentRange(response.headers["content-range"])
        return (parsed?.start ?? range?.lowerBound ?? 0, parsed?.total)
    }

    /// Exactly the bytes asked for: a `206` must hold the whole range at its start; a `200` (a server that ignored
    /// `Range`) is cut to it. With ``mayEndEarly``, a body that stops where the resource ends (a `206` whose
    /// `Content-Range` total says so, a `200` shorter than the range) is the part of the range that exists.
    public func body(of response: LoadResponse) throws(LoadingError) -> Data {
        guard let range else { return response.data }
        let (offset, total) = placement(of: response)
        if response.statusCode == 206 {
            let reachesEnd = mayEndEarly && total.map { $0 >= offset && $0 - offset == response.data.count } == true
            guard offset == range.lowerBound, response.data.count == range.count || reachesEnd,
                response.data.count <= range.count
            else {
                throw LoadingError(
                    .truncated(expected: range.count, received: response.data.count), url: url,
                    "the byte range \(range.lowerBound)..<\(range.upperBound) came back with \(response.data.count) "
                        + "bytes at \(offset)")
            }
            return response.data
        }
        let base = response.data.startIndex
        if mayEndEarly, response.data.count < range.upperBound, response.data.count > range.lowerBound {
            return response.data.subdata(in: (base + Int(range.lowerBound))..<response.data.endIndex)
        }
        guard response.data.count >= range.upperBound else {
            throw LoadingError(
                .invalidContent, url: url,
                "the byte range \(range.lowerBound)..<\(range.upperBound) is past the end of the "
                    + "\(response.data.count)-byte resource")
        }
        return response.data.subdata(in: (base + Int(range.lowerBound))..<(base + Int(range.upperBound)))
    }

    /// A `Content-Range: bytes start-end/total` header read with bounds (`total` is `nil` for `*`); `nil` when
    /// absent or malformed.
    public static func contentRange(_ header: String?) -> (start: Int64, end: Int64, total: Int64?)? {
        guard let header else { return nil }
        let text = header.trimmingCharacters(in: .whitespaces)
        guard text.lowercased().hasPrefix("bytes "), let slash = text.lastIndex(of: "/") else { return nil }
        let span = text[text.index(text.startIndex, offsetBy: 6)..<slash].split(
            separator: "-", omittingEmptySubsequences: false)
        let totalText = text[text.index(after: slash)...].trimmingCharacters(in: .whitespaces)
        // Below 2^53 so that a size converts to Double and back exactly.
        let bound: Int64 = 1 << 53
        guard span.count == 2,
            let start = Int64(span[0].trimmingCharacters(in: .whitespaces)),
            let end = Int64(span[1].trimmingCharacters(in: .whitespaces)),
            start >= 0, end >= start, end < bound
        else { return nil }
        if totalText == "*" { return (start, end, nil) }
        guard let total = Int64(totalText), total > end, total <= bound else { return nil }
        return (start, end, total)
    }
}
