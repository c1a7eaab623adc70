import Crypto
public import Foundation
import _CryptoExtras

/// HLS segment decryption.
public enum SegmentDecryption {
    /// Decrypts an AES-128 segment (RFC 8216 5.2: CBC with PKCS7 padding). Without an explicit IV the IV is the
    /// media sequence number, big-endian in 16 bytes.
    public static func decryptAES128(_ bytes: Data, key: Data, iv: [UInt8]?, sequenceNumber: Int) throws -> Data {
        let vector =
            iv
            ?? (0..<16).map { i in i < 8 ? 0 : UInt8(truncatingIfNeeded: UInt64(sequenceNumber) >> (8 * (15 - i))) }
        return try AES._CBC.decrypt(bytes, using: SymmetricKey(data: key), iv: try AES._CBC.IV(ivBytes: vector))
    }
}
