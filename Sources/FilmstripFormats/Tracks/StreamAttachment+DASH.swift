public import Foundation

extension StreamAttachment {
    /// The MPD `bytes` (fetched from `url`) with an image AdaptationSet holding `representations` in every Period,
    /// each covering its Period's time (a SegmentTimeline with the Period's `presentationTimeOffset`; the sheets stay
    /// on the whole presentation's timeline), the rest of the document kept byte for byte but for its base URLs: the
    /// MPD's and Periods' `BaseURL`s are folded into each AdaptationSet's, rewritten to resolve from `directory`
    /// (relative for a local MPD, absolute for a remote one), so that the image sets, which have none, resolve from
    /// the directory. Image sets the MPD already has are kept. A dynamic MPD is refused.
    public static func mpd(
        _ bytes: Data, url: URL, directory: URL, representations: [DASHImageRepresentation]
    ) throws(Failure) -> String {
        let presentation: Presentation
        do {
            presentation = try DASHManifestParser().parse(bytes, url: url)
        } catch {
            throw Failure("the MPD cannot be read: \(error)")
        }
        guard !presentation.isLive else {
            throw Failure("the MPD is dynamic (live); tracks are attached to on-demand presentations only")
        }
        let raw = [UInt8](bytes)
        let parsed: Result<XMLNode, XMLTreeReader.Failure> = raw.withUnsafeBytes { buffer in
            Result { () throws(XMLTreeReader.Failure) in try XMLTreeReader(maximumElements: 1_000_000).parse(buffer) }
        }
        guard case .success(let root) = parsed, root.name == "MPD" else { throw Failure("the MPD cannot be read") }
        let periods = root.children("Period")
        guard periods.count == presentation.periods.count else {
            throw Failure("the MPD's Periods could not all be placed on its timeline")
        }
        let namespace =
            root.qualifiedName.split(separator: ":").count == 2
            ? String(root.qualifiedName.split(separator: ":")[0]) + ":" : ""
        var edits = MPDEdits(raw: raw, namespace: namespace)
        let rebase = ReferenceRebase(manifest: url, directory: directory)
        let upperBases = root.children("BaseURL") + periods.flatMap { $0.children("BaseURL") }
        if !rebase.isIdentity || !upperBases.isEmpty {
            for base in upperBases { edits.remove(base) }
            let top = MPDEdits.bases(of: root, over: [(url, [])])
            for period in periods {
                let periodBases = MPDEdits.bases(of: period, over: top)
                for set in period.children("AdaptationSet") where set.contentStart < set.end {
                    let resolved = MPDEdits.bases(of: set, over: periodBases)
                    // The manifest's own URL (no BaseURL above) stands for its folder.
                    let folders = resolved.map { $0.url == url ? (url.deletingLastPathComponent(), $0.attributes) : $0 }
                    edits.setBaseURLs(of: set, to: folders.map { (rebase.absolute($0.0), $0.1) })
                }
            }
        }
        let trackEnd = representations.map { $0.layout.ends.last ?? 0 }.max() ?? 0
        for (node, period) in zip(periods, presentation.periods) where node.contentStart < node.end {
            let start = Int64((period.start * 1000).rounded())
            guard start < trackEnd else { continue }
            let span = DASHPeriodSpan(start: start, duration: period.duration.map { Int64(($0 * 1000).rounded()) })
            let sets = node.children("AdaptationSet")
            let taken = Set(sets.compactMap { $0.attribute("id").flatMap { Int($0) } })
            let id = taken.contains(1000) ? (taken.max() ?? 0) + 1 : 1000
            // Representation ids are unique in a Period: one of ours that the Period uses already gets a suffix.
            var used = Set(sets.flatMap { $0.children("Representation").compactMap { $0.attribute("id") } })
            let unique = representations.map { representation -> DASHImageRepresentation in
                var renamed = representation
                var n = 2
                while used.contains(renamed.id) {
                    renamed.id = "\(representation.id)-\(n)"
                    n += 1
                }
                used.insert(renamed.id)
                return renamed
            }
            edits.insertLast(in: node, PreviewTrackWriter.dashAdaptationSet(unique, id: id, period: span))
        }
        return edits.applied()
    }
}

/// Byte-range edits of an MPD, applied at once.
struct MPDEdits {
    let raw: [UInt8]
    let namespace: String
    private var edits: [(range: Range<Int>, text: String)] = []

    init(raw: [UInt8], namespace: String) {
        self.raw = raw
        self.namespace = namespace
    }

    /// The base URLs in effect inside `node`: each of its `BaseURL`s resolved against each of `parents` (its own
    /// attributes kept), or the parents when it has none. At most 16 combinations.
    static func bases(
        of node: XMLNode, over parents: [(url: URL, attributes: [(name: String, value: String)])]
    ) -> [(url: URL, attributes: [(name: String, value: String)])] {
        let own = node.children("BaseURL")
        guard !own.isEmpty else { return parents }
        var out: [(url: URL, attributes: [(name: String, value: String)])] = []
        for parent in parents {
            for base in own {
                let text = base.text.trimmingCharacters(in: .whitespacesAndNewlines)
                let resolved = URL(string: text, relativeTo: parent.url)?.absoluteURL ?? parent.url
                out.append((resolved, base.attributes))
                if out.count == 16 { return out }
            }
        }
        return out
    }

    /// Removes `node` with the whitespace before it on its line.
    mutating func remove(_ node: XMLNode) {
        var start = node.offset
        while start > 0, raw[start - 1] == 0x20 || raw[start - 1] == 0x09 { start -= 1 }
        if start > 0, raw[start - 1] == 0x0A { start -= 1 }
        edits.append((start..<node.end, ""))
    }

    /// Makes `set`'s base URLs exactly `bases`: its own `BaseURL`s give way to them, else they go before its segment
    /// information and Representations (where the schema puts `BaseURL`).
    mutating func setBaseURLs(of set: XMLNode, to bases: [(text: String, attributes: [(name: String, value: String)])])
    {
        let own = set.children("BaseURL")
        let anchor =
            own.first?.offset
            ?? set.children.first {
                ["SegmentBase", "SegmentList", "SegmentTemplate", "Representation"].contains($0.name)
            }?
            .offset ?? set.endTagStart
        let indent = indentation(before: anchor)
        let elements = bases.map { base in
            let attributes = base.attributes.map { " \($0.name)=\"\(Self.escaped($0.value))\"" }.joined()
            return "<\(namespace)BaseURL\(attributes)>\(Self.escaped(base.text))</\(namespace)BaseURL>"
        }
        if let first = own.first {
            edits.append((first.offset..<first.end, elements.joined(separator: "\n" + indent)))
            for other in own.dropFirst() { remove(other) }
        } else {
            edits.append((anchor..<anchor, elements.joined(separator: "\n" + indent) + "\n" + indent))
        }
    }

    /// Inserts `xml` (our own element, unprefixed, indented by two spaces a level) as the last child of `node`,
    /// indented as the document indents (its children's indentation, tabs or spaces).
    mutating func insertLast(in node: XMLNode, _ xml: String) {
        let outer = indentation(before: node.offset)
        let inner = node.children.first.map { indentation(before: $0.offset) } ?? outer + "  "
        let unit = inner.hasPrefix(outer) && inner.count > outer.count ? String(inner.dropFirst(outer.count)) : "  "
        var text = xml
        if !namespace.isEmpty {
            text = text.replacingOccurrences(of: "</", with: "</\(namespace)")
                .replacingOccurrences(of: "<(?=[A-Za-z])", with: "<\(namespace)", options: .regularExpression)
        }
        let lines: [Substring] = text.split(separator: "\n", omittingEmptySubsequences: false)
        let body = lines.map { line -> String in
            let spaces = line.prefix { $0 == " " }.count
            return inner + String(repeating: unit, count: spaces / 2) + line.dropFirst(spaces)
        }.joined(separator: "\n")
        // Before the end tag, on a line of its own.
        var at = node.endTagStart
        while at > node.contentStart, raw[at - 1] == 0x20 || raw[at - 1] == 0x09 { at -= 1 }
        let newline = at > 0 && raw[at - 1] == 0x0A
        edits.append((at..<at, (newline ? "" : "\n") + body + "\n"))
    }

    /// The spaces and tabs that start the line `offset` is on, up to `offset`.
    private func indentation(before offset: Int) -> String {
        var start = offset
        while start > 0, raw[start - 1] == 0x20 || raw[start - 1] == 0x09 { start -= 1 }
        return String(decoding: raw[start..<offset], as: UTF8.self)
    }

    static func escaped(_ text: String) -> String {
        text.replacingOccurrences(of: "&", with: "&amp;").replacingOccurrences(of: "<", with: "&lt;")
            .replacingOccurrences(of: "\"", with: "&quot;")
    }

    /// The document with every edit made (edits never overlap).
    func applied() -> String {
        var out = raw
        for edit in edits.sorted(by: { $0.range.lowerBound > $1.range.lowerBound }) {
            out.replaceSubrange(edit.range, with: Array(edit.text.utf8))
        }
        return String(decoding: out, as: UTF8.self)
    }
}
