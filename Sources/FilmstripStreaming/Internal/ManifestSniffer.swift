import Foundation

/// Tells an HLS playlist from an MPD by content, never by name.
enum ManifestSniffer {
    enum Kind { case hls, dash }

    static func kind(of data: Data) -> Kind? {
        data.withUnsafeBytes { raw -> Kind? in
            var i = 0
            if raw.count >= 3, raw[0] == 0xEF, raw[1] == 0xBB, raw[2] == 0xBF { i = 3 }
            while i < raw.count, raw[i] == 0x20 || raw[i] == 0x09 || raw[i] == 0x0A || raw[i] == 0x0D { i += 1 }
            let rest = UnsafeRawBufferPointer(rebasing: raw[i...])
            if rest.starts(with: Array("#EXTM3U".utf8)) { return .hls }
            // XML: the first element after the prolog, comments and processing instructions must be MPD (checked by
            // the parser); anything starting with '<' goes to it for a precise error.
            if rest.first == 0x3C { return .dash }
            return nil
        }
    }
}
