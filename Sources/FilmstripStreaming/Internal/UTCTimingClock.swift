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

    /// An RFC 7231 date (`Sun, 06 Nov 1994 08:49:37 GMT`), read field by field: a time server's body is outside
    /// input, and ICU's date parser (behind `DateFormatter`) dies with SIGFPE on some hostile dates.
    static func httpDate(_ text: String) -> Date? {
        let fields = text.trimmingCharacters(in: .whitespaces).split(separator: " ")
        let months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]
        guard fields.count == 6, fields[0].count == 4, fields[0].hasSuffix(","), fields[5] == "GMT",
            let month = months.firstIndex(of: String(fields[2])), fields[1].count == 2, fields[3].count == 4,
            fields[4].count == 8
        else { return nil }
        let iso = "\(fields[3])-\(month < 9 ? "0" : "")\(month + 1)-\(fields[1])T\(fields[4])Z"
        return XSValues.dateTime(iso)
    }
}
