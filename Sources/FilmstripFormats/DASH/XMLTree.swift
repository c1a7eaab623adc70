import Foundation

/// A parsed XML element: just what an MPD reader needs (local names, attributes, children, character data).
struct XMLNode {
    /// The local name (any namespace prefix removed).
    var name: String
    /// Attributes in document order, names as written (prefixes kept).
    var attributes: [(name: String, value: String)]
    var children: [XMLNode] = []
    /// Character data directly inside the element, entities decoded.
    var text = ""
    /// Byte offset of the `<` that opens the element (for line numbers in errors).
    var offset: Int
    /// The name as written, with its namespace prefix.
    var qualifiedName = ""
    /// Byte offset just after the start tag's `>` (for a self-closing element, its end).
    var contentStart = 0
    /// Byte offset of the `</` of the end tag (for a self-closing element, its end).
    var endTagStart = 0
    /// Byte offset just after the element's last `>`. With the others, lets a writer splice a document in place.
    var end = 0

    func attribute(_ name: String) -> String? {
        for attribute in attributes where attribute.name == name { return attribute.value }
        return nil
    }

    func child(_ name: String) -> XMLNode? { children.first { $0.name == name } }
    func children(_ name: String) -> [XMLNode] { children.filter { $0.name == name } }
}

/// A small, strict, non-validating XML reader over bytes that refuses document type declarations and entity
/// declarations before anything is expanded: only the five predefined entities and character references are
/// decoded, so no input can make it expand text (no "billion laughs", no external entities).
struct XMLTreeReader {
    /// Limits that bound memory before it is spent.
    var maximumElements: Int
    var maximumDepth = 64

    enum Failure: Error {
        case malformed(String, offset: Int)
        case refused(String, offset: Int)
        case tooLarge(String, offset: Int)
    }

    func parse(_ raw: UnsafeRawBufferPointer) throws(Failure) -> XMLNode {
        var cursor = Cursor(raw: raw)
        if raw.count >= 3, raw[0] == 0xEF, raw[1] == 0xBB, raw[2] == 0xBF { cursor.position = 3 }
        var stack: [XMLNode] = []
        var root: XMLNode?
        var elements = 0
        while !cursor.atEnd {
            let start = cursor.position
            if cursor.peek != 0x3C {  // character data
                // Whitespace between elements (most of an MPD's text) is skipped without making a string.
                if cursor.skipSpace(), cursor.atEnd || cursor.peek == 0x3C { continue }
                let text = try cursor.text(until: 0x3C)
                guard !stack.isEmpty else { throw .malformed("text outside the root element", offset: start) }
                stack[stack.count - 1].text += text
                continue
            }
            if cursor.has("<?") {
                try cursor.skip(past: "?>", what: "processing instruction", from: start)
            } else if cursor.has("<!--") {
                try cursor.skip(past: "-->", what: "comment", from: start)
            } else if cursor.has("<![CDATA[") {
                cursor.position += 9
                let body = try cursor.until("]]>", what: "CDATA section", from: start)
                guard var top = stack.popLast() else {
                    throw .malformed("CDATA outside the root element", offset: start)
                }
                top.text += body
                stack.append(top)
            } else if cursor.has("<!DOCTYPE") || cursor.has("<!doctype") {
                throw .refused("a document type declaration (DTD) is not accepted", offset: start)
            } else if cursor.has("<!ENTITY") {
                throw .refused("an entity declaration is not accepted", offset: start)
            } else if cursor.has("<!") {
                throw .malformed("an unknown markup declaration", offset: start)
            } else if cursor.has("</") {
                cursor.position += 2
                let name = try cursor.name()
                cursor.skipSpace()
                guard cursor.peek == 0x3E else { throw .malformed("'>' expected after </\(name)", offset: start) }
                cursor.position += 1
                guard var closed = stack.popLast() else {
                    throw .malformed("</\(name)> closes nothing", offset: start)
                }
                guard closed.name == localName(name) else {
                    throw .malformed("</\(name)> does not close <\(closed.name)>", offset: start)
                }
                closed.endTagStart = start
                closed.end = cursor.position
                if stack.isEmpty {
                    root = closed
                } else {
                    stack[stack.count - 1].children.append(closed)
                }
            } else {
                cursor.position += 1
                let name = try cursor.name()
                elements += 1
                guard elements <= maximumElements else {
                    throw .tooLarge("more than \(maximumElements) elements", offset: start)
                }
                if root != nil, stack.isEmpty { throw .malformed("a second root element <\(name)>", offset: start) }
                var node = XMLNode(name: localName(name), attributes: [], offset: start)
                node.qualifiedName = name
                var selfClosing = false
                while true {
                    let hadSpace = cursor.skipSpace()
                    guard let c = cursor.peek else { throw .malformed("<\(name) is not closed", offset: start) }
                    if c == 0x3E {
                        cursor.position += 1
                        break
                    }
                    if c == 0x2F {
                        guard cursor.has("/>") else { throw .malformed("'/>' expected in <\(name)", offset: start) }
                        cursor.position += 2
                        selfClosing = true
                        break
                    }
                    guard hadSpace else {
                        throw .malformed("a space is needed between attributes in <\(name)", offset: cursor.position)
                    }
                    let attributeName = try cursor.name()
                    cursor.skipSpace()
                    guard cursor.peek == 0x3D else {
                        throw .malformed("'=' expected after \(attributeName) in <\(name)", offset: cursor.position)
                    }
                    cursor.position += 1
                    cursor.skipSpace()
                    guard let quote = cursor.peek, quote == 0x22 || quote == 0x27 else {
                        throw .malformed("the value of \(attributeName) must be quoted", offset: cursor.position)
                    }
                    cursor.position += 1
                    let value = try cursor.text(until: quote, attribute: true)
                    guard cursor.peek == quote else {
                        throw .malformed("the value of \(attributeName) is not closed", offset: cursor.position)
                    }
                    cursor.position += 1
                    if node.attribute(attributeName) != nil {
                        throw .malformed("\(attributeName) appears twice in <\(name)>", offset: start)
                    }
                    node.attributes.append((attributeName, value))
                }
                node.contentStart = cursor.position
                if selfClosing {
                    node.endTagStart = cursor.position
                    node.end = cursor.position
                    if stack.isEmpty {
                        root = node
                    } else {
                        stack[stack.count - 1].children.append(node)
                    }
                } else {
                    guard stack.count < maximumDepth else {
                        throw .tooLarge("elements nested deeper than \(maximumDepth)", offset: start)
                    }
                    stack.append(node)
                }
            }
        }
        if let open = stack.last { throw .malformed("<\(open.name)> is not closed", offset: raw.count) }
        guard let root else { throw .malformed("no root element", offset: 0) }
        return root
    }

    private func localName(_ name: String) -> String {
        guard let colon = name.utf8.lastIndex(of: 0x3A) else { return name }
        return String(name[name.utf8.index(after: colon)...])
    }

    /// A position in the bytes.
    private struct Cursor {
        let raw: UnsafeRawBufferPointer
        var position = 0

        var atEnd: Bool { position >= raw.count }
        var peek: UInt8? { position < raw.count ? raw[position] : nil }

        func has(_ prefix: StaticString) -> Bool {
            let n = prefix.utf8CodeUnitCount
            guard raw.count - position >= n, let base = raw.baseAddress else { return false }
            return memcmp(base + position, prefix.utf8Start, n) == 0
        }

        @discardableResult
        mutating func skipSpace() -> Bool {
            let from = position
            while let c = peek, c == 0x20 || c == 0x09 || c == 0x0A || c == 0x0D { position += 1 }
            return position > from
        }

        mutating func skip(past end: StaticString, what: String, from start: Int) throws(Failure) {
            _ = try until(end, what: what, from: start)
        }

        /// The text up to `end` (which is consumed), undecoded.
        mutating func until(_ end: StaticString, what: String, from start: Int) throws(Failure) -> String {
            let from = position
            while !atEnd {
                if has(end) {
                    let text = String(decoding: UnsafeRawBufferPointer(rebasing: raw[from..<position]), as: UTF8.self)
                    position += end.utf8CodeUnitCount
                    return text
                }
                position += 1
            }
            throw .malformed("an unterminated \(what)", offset: start)
        }

        mutating func name() throws(Failure) -> String {
            let from = position
            while let c = peek,
                c >= 0x80 || (c >= 0x30 && c <= 0x3A) || (c >= 0x41 && c <= 0x5A) || (c >= 0x61 && c <= 0x7A)
                    || c == 0x5F || c == 0x2D || c == 0x2E
            {
                position += 1
            }
            guard position > from else { throw .malformed("a name was expected", offset: from) }
            return String(decoding: UnsafeRawBufferPointer(rebasing: raw[from..<position]), as: UTF8.self)
        }

        /// Character data up to (not including) `stop`, with references decoded.
        mutating func text(until stop: UInt8, attribute: Bool = false) throws(Failure) -> String {
            let from = position
            var hasReference = false
            while let c = peek, c != stop {
                if c == 0x26 { hasReference = true }
                if attribute, c == 0x3C {
                    throw .malformed("'<' is not allowed in an attribute value", offset: position)
                }
                position += 1
            }
            let slice = UnsafeRawBufferPointer(rebasing: raw[from..<position])
            guard hasReference else { return String(decoding: slice, as: UTF8.self) }
            return try decodeReferences(slice, offset: from)
        }

        private func decodeReferences(_ bytes: UnsafeRawBufferPointer, offset: Int) throws(Failure) -> String {
            var out = [UInt8]()
            out.reserveCapacity(bytes.count)
            var i = 0
            while i < bytes.count {
                let c = bytes[i]
                guard c == 0x26 else {
                    out.append(c)
                    i += 1
                    continue
                }
                guard let semicolon = bytes[i...].firstIndex(of: 0x3B), semicolon - i <= 12 else {
                    throw .malformed("an unterminated '&' reference", offset: offset + i)
                }
                let name = String(decoding: UnsafeRawBufferPointer(rebasing: bytes[(i + 1)..<semicolon]), as: UTF8.self)
                switch name {
                case "lt": out.append(0x3C)
                case "gt": out.append(0x3E)
                case "amp": out.append(0x26)
                case "quot": out.append(0x22)
                case "apos": out.append(0x27)
                default:
                    var scalar: UInt32?
                    if name.hasPrefix("#x") || name.hasPrefix("#X") {
                        scalar = UInt32(name.dropFirst(2), radix: 16)
                    } else if name.hasPrefix("#") {
                        scalar = UInt32(name.dropFirst(), radix: 10)
                    } else {
                        throw .refused(
                            "the entity '&\(name);' is not defined (entities are not expanded)", offset: offset + i)
                    }
                    guard let value = scalar, let unicode = Unicode.Scalar(value), value != 0 else {
                        throw .malformed("'&\(name);' is not a character", offset: offset + i)
                    }
                    out.append(contentsOf: Array(String(Character(unicode)).utf8))
                }
                i = semicolon + 1
            }
            return String(decoding: out, as: UTF8.self)
        }
    }
}
