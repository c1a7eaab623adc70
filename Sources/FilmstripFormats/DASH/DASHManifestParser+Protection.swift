import Foundation

extension MPDWalk {
    /// The `ContentProtection` elements under `node`: Common Encryption (the mp4protection element's scheme and
    /// default key id) and the key systems named (ClearKey's licence URL). Protection of an image track is refused:
    /// thumbnails are pictures, never encrypted samples.
    func protections(_ node: XMLNode, image: Bool) throws(DASHParseError) -> [StreamProtection] {
        var found: [StreamProtection] = []
        let isImage =
            image || node.attribute("contentType") == "image" || node.attribute("mimeType")?.hasPrefix("image/") == true
        for child in node.children {
            if child.name == "ContentProtection" {
                if isImage { throw fail(.unsupported, "unsupported: protected content in an image track", child) }
                let scheme = (child.attribute("schemeIdUri") ?? "").lowercased()
                var entry = StreamProtection()
                if scheme == "urn:mpeg:dash:mp4protection:2011" {
                    entry.scheme = child.attribute("value")
                } else if scheme.hasPrefix("urn:uuid:") {
                    entry.system = String(scheme.dropFirst("urn:uuid:".count))
                }
                if let kid = child.attributes.first(where: { $0.name.hasSuffix("default_KID") })?.value {
                    guard let bytes = StreamProtection.keyID(kid) else {
                        throw fail(.malformed, "cenc:default_KID is not a key id: \(kid.prefix(80))", child)
                    }
                    entry.keyIDs = [bytes]
                }
                if let laurl = child.children.first(where: { $0.name.lowercased().hasSuffix("laurl") }) {
                    entry.licenseURL = URL(string: laurl.text.trimmingCharacters(in: .whitespacesAndNewlines))
                }
                found.append(entry)
            } else {
                found += try protections(child, image: isImage)
            }
        }
        return found
    }
}
