import FilmstripFormats
import Foundation

/// Measures how far the local clock is from the server's by a presentation's `UTCTiming` sources, tried in order.
enum UTCTimingClock {
    /// Seconds to add to the local clock (0 when no source answers).
    static func offset(for presentation: Presentation, fetcher: ByteFetcher, now: @Sendable () -> Date) async -> Double
    {
        for source in presentation.utcTiming {
            switch source.scheme {
            case .direct:
                if let date = XSValues.dateTime(source.value) { return date.timeIntervalSince(now()) }
            case .httpISO, .httpXSDate:
                // Several URLs may be given, separated by spaces.
                for text in source.value.split(separator: " ") {
                    guard let url = URL(string: String(text), relativeTo: presentation.url)?.absoluteURL else {
                        continue
                    }
                    let before = now()
                    guard let body = try? await fetcher.fetch(url, limit: 4096, object: .clock) else {
                        continue
                    }
                    let after = now()
                    let text = String(decoding: body, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
                    guard let server = XSValues.dateTime(text) ?? httpDate(text) else { continue }
                    let midpoint = before.addingTimeInterval(after.timeIntervalSince(before) / 2)
                    return server.timeIntervalSince(midpoint)
                }
            case .httpHead, .other:  // not used: a HEAD needs the response headers
                continue
            }
        }
        return 0
    }

    /// An RFC 7231 date (`Sun, 06 Nov 1994 08:49:37 GMT`).
    static func httpDate(_ text: String) -> Date? {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "GMT")
        formatter.dateFormat = "EEE, dd MMM yyyy HH:mm:ss zzz"
        return formatter.date(from: text)
    }
}
