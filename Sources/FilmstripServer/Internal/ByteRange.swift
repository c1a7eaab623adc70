import Foundation

/// A request's `Range` header against a file of `size` bytes (RFC 9110 section 14): one range is served as
/// asked; several ranges, or a header that is not a byte range, get the whole file.
enum ByteRange: Equatable {
    case whole
    case part(ClosedRange<Int>)
    case unsatisfiable

    static func parse(_ header: String?, size: Int) -> ByteRange {
        guard let header, header.lowercased().hasPrefix("bytes=") else { return .whole }
        let spec = header.dropFirst("bytes=".count).trimmingCharacters(in: .whitespaces)
        guard !spec.contains(",") else { return .whole }
        let parts = spec.split(separator: "-", maxSplits: 1, omittingEmptySubsequences: false)
        guard parts.count == 2 else { return .whole }
        let first = parts[0].trimmingCharacters(in: .whitespaces)
        let last = parts[1].trimmingCharacters(in: .whitespaces)
        // Digits only: `Int` would also take a sign.
        guard (first + last).allSatisfy({ $0.isASCII && $0.isNumber }) else { return .whole }
        if first.isEmpty {
            // The last N bytes.
            guard let n = Int(last), n >= 0 else { return .whole }
            guard n > 0, size > 0 else { return .unsatisfiable }
            return .part(max(0, size - n)...(size - 1))
        }
        guard let start = Int(first), start >= 0 else { return .whole }
        guard start < size else { return .unsatisfiable }
        if last.isEmpty { return .part(start...(size - 1)) }
        guard let end = Int(last), end >= start else { return .whole }
        return .part(start...min(end, size - 1))
    }
}
