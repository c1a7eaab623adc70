public import Foundation

/// Serialises ``CmcdData`` per CTA-5004: keys sorted alphabetically and joined by `,`; `true` as the bare key and
/// `false` omitted; strings quoted with `\` and `"` escaped; tokens bare; numbers as integers or with up to three
/// decimals; NaN, infinities, numbers beyond ±10^15, empty strings and unset values dropped. What could break the
/// syntax or a header is dropped too: a string with a character outside printable ASCII (CR and LF among them), a
/// custom token that is not a token, a custom key that is not letters, digits, `-`, `_` and `.` with a
/// `-`. ``CmcdDecoder`` reads the result back.
public enum CmcdEncoder {
    /// The key-value pairs, after rounding and dropping, sorted by key.
    ///
    /// - Parameters:
    ///   - keys: when given, only these keys are sent (custom keys included by name).
    ///   - baseURL: when given, an absolute `nor` is made relative to it.
    public static func pairs(_ data: CmcdData, keys: Set<String>? = nil, baseURL: URL? = nil) -> [(String, String)] {
        var out: [(String, String)] = []
        func add(_ key: String, _ value: String?) {
            guard let value, keys.map({ $0.contains(key) }) ?? true else { return }
            out.append((key, value))
        }
        func flag(_ key: String, _ value: Bool) {
            if value, keys.map({ $0.contains(key) }) ?? true { out.append((key, "")) }
        }
        add("br", integer(data.encodedBitrate))
        add("d", integer(data.objectDuration))
        add("ot", data.objectType?.rawValue)
        add("tb", integer(data.topBitrate))
        add("bl", hundred(data.bufferLength))
        add("dl", hundred(data.deadline))
        add("mtp", hundred(data.measuredThroughput))
        add(
            "nor",
            data.nextObjectRequest.flatMap { nonEmpty(relative($0, to: baseURL)) }.map { quoted(componentEncoded($0)) })
        add("nrr", data.nextRangeRequest.flatMap(printable).map(quoted))
        flag("su", data.startup)
        add("cid", data.contentID.flatMap(printable).map { quoted(String($0.prefix(64))) })
        if let rate = data.playbackRate, rate != 1 { add("pr", decimal(rate)) }
        add("sf", data.streamingFormat?.rawValue)
        add("sid", data.sessionID.flatMap(printable).map { quoted(String($0.prefix(64))) })
        add("st", data.streamType?.rawValue)
        if let version = data.version, version != 1 { add("v", String(version)) }
        flag("bs", data.bufferStarvation)
        add("rtp", hundred(data.requestedMaximumThroughput))
        for (key, value) in data.custom where isCustomKey(key) {
            switch value {
            case .string(let text): add(key, printable(text).map(quoted))
            case .integer(let number): add(key, number.magnitude <= UInt(limit) ? String(number) : nil)
            case .decimal(let number): add(key, decimal(number))
            case .boolean(let on): flag(key, on)
            case .token(let token): add(key, isToken(token) ? token : nil)
            }
        }
        return out.sorted { $0.0 < $1.0 }
    }

    /// The CMCD string, as in `br=200,bs,cid="content-id",d=325`.
    public static func encode(_ data: CmcdData, keys: Set<String>? = nil, baseURL: URL? = nil) -> String {
        join(pairs(data, keys: keys, baseURL: baseURL))
    }

    /// Header mode: one header per non-empty shard. `customShards` places custom keys (default: request).
    public static func headers(
        _ data: CmcdData, keys: Set<String>? = nil, baseURL: URL? = nil, customShards: [String: CmcdShard] = [:]
    ) -> [String: String] {
        var shards: [CmcdShard: [(String, String)]] = [:]
        for pair in pairs(data, keys: keys, baseURL: baseURL) {
            shards[customShards[pair.0] ?? CmcdShard.of(pair.0), default: []].append(pair)
        }
        var headers: [String: String] = [:]
        for (shard, pairs) in shards where !pairs.isEmpty { headers[shard.rawValue] = join(pairs) }
        return headers
    }

    /// Query mode: the `CMCD=` parameter with the percent-encoded string (empty when there is nothing to send).
    public static func query(_ data: CmcdData, keys: Set<String>? = nil, baseURL: URL? = nil) -> String {
        let text = encode(data, keys: keys, baseURL: baseURL)
        return text.isEmpty ? "" : "CMCD=" + componentEncoded(text)
    }

    /// `url` with its `CMCD` query parameter set to the data (replacing an existing one; removed when empty).
    public static func url(_ url: URL, adding data: CmcdData, keys: Set<String>? = nil, baseURL: URL? = nil) -> URL {
        guard var components = URLComponents(url: url, resolvingAgainstBaseURL: true) else { return url }
        let kept = (components.percentEncodedQuery ?? "").split(separator: "&", omittingEmptySubsequences: true)
            .filter { !$0.hasPrefix("CMCD=") && $0 != "CMCD" }
            .map(String.init)
        let cmcd = query(data, keys: keys, baseURL: baseURL)
        let parts = kept + (cmcd.isEmpty ? [] : [cmcd])
        components.percentEncodedQuery = parts.isEmpty ? nil : parts.joined(separator: "&")
        return components.url ?? url
    }

    // MARK: Values

    private static func join(_ pairs: [(String, String)]) -> String {
        pairs.map { $0.1.isEmpty ? $0.0 : "\($0.0)=\($0.1)" }.joined(separator: ",")
    }

    private static func nonEmpty(_ text: String) -> String? { text.isEmpty ? nil : text }

    /// The largest magnitude sent: beyond it a number is not a measurement (and would not fit an integer).
    private static let limit = 1_000_000_000_000_000

    private static func finite(_ value: Double?) -> Double? {
        guard let value, value.isFinite, abs(value) <= Double(limit) else { return nil }
        return value
    }

    /// A non-empty string of printable ASCII, which a quoted CMCD string (and a header) can carry.
    private static func printable(_ text: String) -> String? {
        !text.isEmpty && text.utf8.allSatisfy(isPrintable) ? text : nil
    }

    static func isPrintable(_ byte: UInt8) -> Bool { byte >= 0x20 && byte < 0x7F }

    /// A structured-field token character (RFC 8941 3.3.4): a letter or `*` first, then `tchar`, `:` or `/`.
    static func isTokenByte(_ byte: UInt8, first: Bool) -> Bool {
        let letter = (0x41...0x5A).contains(byte) || (0x61...0x7A).contains(byte)
        if first { return letter || byte == UInt8(ascii: "*") }
        return letter || (0x30...0x39).contains(byte) || Array("!#$%&'*+-.^_`|~:/".utf8).contains(byte)
    }

    private static func isToken(_ text: String) -> Bool {
        let bytes = Array(text.utf8)
        return !bytes.isEmpty && bytes.indices.allSatisfy { isTokenByte(bytes[$0], first: $0 == 0) }
    }

    /// A key character, for the encoder and ``CmcdDecoder`` alike: a letter, a digit, `-`, `_` or `.`.
    static func isKeyByte(_ byte: UInt8) -> Bool {
        (0x61...0x7A).contains(byte) || (0x41...0x5A).contains(byte) || (0x30...0x39).contains(byte) || byte == 0x2D
            || byte == 0x5F || byte == 0x2E
    }

    private static func isCustomKey(_ key: String) -> Bool { key.contains("-") && key.utf8.allSatisfy(isKeyByte) }

    private static func integer(_ value: Double?) -> String? {
        finite(value).map { String(Int($0.rounded())) }
    }

    private static func hundred(_ value: Double?) -> String? {
        finite(value).map { String(Int(($0 / 100).rounded()) * 100) }
    }

    private static func decimal(_ value: Double) -> String? {
        guard finite(value) != nil else { return nil }
        let rounded = (value * 1000).rounded() / 1000
        if rounded == rounded.rounded() { return String(Int(rounded)) }
        var text = String(format: "%.3f", rounded)
        while text.hasSuffix("0") { text.removeLast() }
        return text
    }

    private static func quoted(_ text: String) -> String {
        "\"" + text.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"") + "\""
    }

    /// Percent-encoding as JavaScript's `encodeURIComponent` does it (what CMCD implementations use).
    static func componentEncoded(_ text: String) -> String {
        var allowed = CharacterSet.alphanumerics.intersection(
            CharacterSet(charactersIn: Unicode.Scalar(0)...Unicode.Scalar(127)))
        allowed.insert(charactersIn: "-_.!~*'()")
        return text.addingPercentEncoding(withAllowedCharacters: allowed) ?? text
    }

    /// `target` relative to `base` when both are on the same origin (`../segments/1.mp4`), else unchanged.
    static func relative(_ target: String, to base: URL?) -> String {
        guard let base, let url = URL(string: target), let scheme = url.scheme, scheme == base.scheme,
            url.host == base.host, url.port == base.port
        else { return target }
        let from = base.deletingLastPathComponent().path.split(separator: "/").map(String.init)
        let to = url.path.split(separator: "/").map(String.init)
        var common = 0
        while common < from.count, common < to.count - 1, from[common] == to[common] { common += 1 }
        let ups = Array(repeating: "..", count: from.count - common)
        var path = (ups + to[common...]).joined(separator: "/")
        if let query = url.query { path += "?" + query }
        return path
    }
}
