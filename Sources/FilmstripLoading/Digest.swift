import Crypto
public import Foundation

/// The package's one content digest: what names disk-cache entries, the server's generated tracks and a catalog's
/// items, and what catalog markers and `--verify` compare.
public enum Digest {
    /// Lowercase hex of the first `bytes` bytes (1...32; all 32 by default) of the SHA-256 of `data`.
    public static func sha256Hex(_ data: Data, bytes: Int = 32) -> String {
        let digits = Array("0123456789abcdef".utf8)
        let count = min(32, max(1, bytes))
        var text: [UInt8] = []
        text.reserveCapacity(count * 2)
        for byte in SHA256.hash(data: data).prefix(count) {
            text.append(digits[Int(byte >> 4)])
            text.append(digits[Int(byte & 0x0F)])
        }
        return String(decoding: text, as: UTF8.self)
    }

    /// ``sha256Hex(_:bytes:)`` of `text`'s UTF-8 bytes.
    public static func sha256Hex(_ text: String, bytes: Int = 32) -> String { sha256Hex(Data(text.utf8), bytes: bytes) }
}
