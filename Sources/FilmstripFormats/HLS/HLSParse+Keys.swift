import Foundation

extension HLSParse {
    /// `EXT-X-KEY`: `NONE`, `AES-128` (whole segments, decrypted as fetched), or Common Encryption of fMP4 samples
    /// (`SAMPLE-AES` is `cbcs`, `SAMPLE-AES-CTR` `cenc`; the segments' own `tenc` and `senc` say how, and the
    /// samples are decrypted after demuxing); any other method is unsupported.
    mutating func keyTag(_ a: [String: String]) throws(HLSParseError) {
        switch a["METHOD"] {
        case "NONE"?:
            key = nil
            sampleEncryption = nil
        case "AES-128"?:
            guard let uri = a["URI"] else { throw error(.missing, "EXT-X-KEY with METHOD=AES-128 needs URI") }
            key = HLSKey(method: "AES-128", uri: try resolve(uri), iv: try a["IV"].map(hexIV))
        case let method? where method == "SAMPLE-AES" || method == "SAMPLE-AES-CTR":
            // Common Encryption of fMP4 samples (the segments' own `tenc` and `senc` say how); SAMPLE-AES of
            // MPEG-TS (Apple's sample encryption of elementary streams) is refused at the first segment.
            key = nil
            var protection = StreamProtection(scheme: method == "SAMPLE-AES" ? "cbcs" : "cenc")
            let format = (a["KEYFORMAT"] ?? "identity").lowercased()
            if format.hasPrefix("urn:uuid:") {
                protection.system = String(format.dropFirst("urn:uuid:".count))
                protection.licenseURL = try a["URI"].map(resolve)
            } else if format == "identity", let uri = a["URI"], uri.hasPrefix("data:"),
                let comma = uri.firstIndex(of: ","),
                let bytes = Data(base64Encoded: String(uri[uri.index(after: comma)...])),
                bytes.count == 16
            {
                protection.keyIDs = [bytes]
            }
            sampleEncryption = protection
        case let method?:
            throw error(
                .unsupported,
                "the key method \(method) is not supported (NONE, AES-128, and SAMPLE-AES and "
                    + "SAMPLE-AES-CTR over fMP4)")
        case nil:
            throw error(.missing, "EXT-X-KEY needs METHOD")
        }
    }
}
