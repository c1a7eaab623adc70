public import Foundation

/// Common Encryption a manifest declares (ISO/IEC 23001-7): a DASH `ContentProtection` element, or an HLS
/// `EXT-X-KEY` with `METHOD=SAMPLE-AES` or `SAMPLE-AES-CTR` over fMP4. The samples' own encryption details are in
/// the media (`tenc`, `senc`); this says which scheme, key ids and key system the stream names.
public struct StreamProtection: Sendable, Hashable {
    /// The W3C ClearKey system's id.
    public static let clearKeySystem = "e2719d58-a985-b3c9-781a-b030af78d30e"

    /// `cenc` or `cbcs` (DASH's `value` on the mp4protection element; HLS `SAMPLE-AES-CTR` or `SAMPLE-AES`), when
    /// given.
    public var scheme: String?
    /// Key ids (16 bytes each): DASH `cenc:default_KID`, or an HLS `identity` key's data URI.
    public var keyIDs: [Data]
    /// The key system (a UUID, lower case), when one is named: `nil` for the mp4protection element or HLS
    /// `identity`.
    public var system: String?
    /// Where the system's licences come from (DASH `clearkey:Laurl` or `dashif:laurl`; an HLS ClearKey key's URI).
    public var licenseURL: URL?

    public init(scheme: String? = nil, keyIDs: [Data] = [], system: String? = nil, licenseURL: URL? = nil) {
        self.scheme = scheme
        self.keyIDs = keyIDs
        self.system = system
        self.licenseURL = licenseURL
    }

    /// Whether this names the ClearKey system.
    public var isClearKey: Bool { system == Self.clearKeySystem }

    /// ``licenseURL`` resolved against `base` (the manifest's URL): a `Laurl` may be relative.
    public func licenseURL(relativeTo base: URL) -> URL? {
        licenseURL.flatMap { URL(string: $0.relativeString, relativeTo: base)?.absoluteURL }
    }

    /// A key id from its UUID spelling (dashes or not) or 32 hexadecimal digits.
    public static func keyID(_ text: String) -> Data? {
        let digits = text.filter { $0 != "-" }.lowercased()
        guard digits.count == 32 else { return nil }
        var bytes = Data(capacity: 16)
        var index = digits.startIndex
        while index < digits.endIndex {
            let next = digits.index(index, offsetBy: 2)
            guard let byte = UInt8(digits[index..<next], radix: 16) else { return nil }
            bytes.append(byte)
            index = next
        }
        return bytes
    }
}
