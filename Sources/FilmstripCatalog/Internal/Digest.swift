import Crypto
import Foundation

/// Lowercase hex of the first `bytes` bytes of the SHA-256 of `data` (all 32 by default): what markers, keys and
/// `--verify` compare.
func sha256Hex(_ data: Data, bytes: Int = 32) -> String {
    let digits = Array("0123456789abcdef".utf8)
    var text: [UInt8] = []
    text.reserveCapacity(bytes * 2)
    for byte in SHA256.hash(data: data).prefix(bytes) {
        text.append(digits[Int(byte >> 4)])
        text.append(digits[Int(byte & 0x0F)])
    }
    return String(decoding: text, as: UTF8.self)
}
