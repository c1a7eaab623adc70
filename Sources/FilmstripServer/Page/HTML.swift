import Foundation

/// Escaping for what pages embed: text and attributes, URL path components and query values, JSON in a
/// `<script>` element.
enum HTML {
    /// Text or an attribute value.
    static func escape(_ text: String) -> String {
        // By scalar, not by character: a quote followed by a combining mark is one character that is not a quote.
        var out = String.UnicodeScalarView()
        for scalar in text.unicodeScalars {
            switch scalar {
            case "&": out.append(contentsOf: "&amp;".unicodeScalars)
            case "<": out.append(contentsOf: "&lt;".unicodeScalars)
            case ">": out.append(contentsOf: "&gt;".unicodeScalars)
            case "\"": out.append(contentsOf: "&quot;".unicodeScalars)
            case "'": out.append(contentsOf: "&#39;".unicodeScalars)
            default: out.append(scalar)
            }
        }
        return String(out)
    }

    private static let unreserved = CharacterSet(
        charactersIn: "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~")

    /// One URL component (a path component or a query value), every byte but the unreserved ones escaped.
    static func component(_ text: String) -> String {
        text.addingPercentEncoding(withAllowedCharacters: unreserved) ?? ""
    }

    /// A library path as a URL path: each component escaped, `/` between them.
    static func path(_ libraryPath: String) -> String {
        libraryPath.split(separator: "/", omittingEmptySubsequences: false).map { component(String($0)) }
            .joined(separator: "/")
    }

    /// A JSON object as text, keys sorted (`{}` for what JSON cannot hold).
    static func json(_ object: Any) -> String {
        guard
            let data = try? JSONSerialization.data(
                withJSONObject: object, options: [.sortedKeys, .withoutEscapingSlashes])
        else { return "{}" }
        return String(decoding: data, as: UTF8.self)
    }

    /// A value as JSON safe inside `<script type="application/json">`: no `<`, so no `</script>`.
    static func scriptJSON(_ object: Any) -> String {
        json(object).replacingOccurrences(of: "<", with: "\\u003c")
            .replacingOccurrences(of: "\u{2028}", with: "\\u2028")
            .replacingOccurrences(of: "\u{2029}", with: "\\u2029")
    }

    /// `m:ss` or `h:mm:ss`.
    static func duration(_ seconds: Double) -> String {
        guard seconds.isFinite, seconds >= 0 else { return "–" }
        let t = Int(seconds.rounded(.down))
        let (h, m, s) = (t / 3600, t / 60 % 60, t % 60)
        return h > 0 ? String(format: "%d:%02d:%02d", h, m, s) : String(format: "%d:%02d", m, s)
    }
}
