import Crypto
public import Foundation
import _CryptoExtras

/// MPEG Common Encryption (ISO/IEC 23001-7) of one sample, as an fMP4 track's `tenc`, `senc` and subsample map
/// describe it: the `cenc` scheme (AES-128 in counter mode over the protected bytes of the whole sample, the counter
/// running on across subsamples) and `cbcs` (AES-128 in CBC mode, the chain started afresh from the IV at each
/// subsample, over a pattern of encrypted and clear 16-byte blocks; a partial block at the end stays clear).
public enum SampleDecryption {
    /// The protection schemes read.
    public enum Scheme: String, Sendable, Hashable {
        case cenc
        case cbcs
    }

    /// A run of clear bytes followed by a run of protected ones.
    public struct Subsample: Sendable, Hashable {
        public var clear: Int
        public var protected: Int

        public init(clear: Int, protected: Int) {
            self.clear = clear
            self.protected = protected
        }
    }

    /// Why a sample cannot be decrypted.
    public struct Failure: Error, Sendable, Equatable {
        public var message: String
        public init(_ message: String) { self.message = message }
    }

    /// Decrypts `sample` in place.
    ///
    /// - Parameters:
    ///   - key: the 16-byte content key.
    ///   - iv: 8 or 16 bytes (8 are the counter block's upper half, for `cenc`; zero-filled for `cbcs`).
    ///   - subsamples: the sample's clear and protected runs; empty when the whole sample is protected.
    ///   - pattern: `cbcs`'s encrypted and skipped blocks (1 and 9 for video); 0 and 0 encrypt every block.
    /// - Throws: ``Failure`` when the key or IV has the wrong length, or the runs do not fit the sample.
    public static func decrypt(
        _ sample: UnsafeMutableRawBufferPointer, scheme: Scheme, key: Data, iv: [UInt8], subsamples: [Subsample],
        pattern: (crypt: Int, skip: Int) = (0, 0)
    ) throws(Failure) {
        guard key.count == 16 else { throw Failure("a content key is 16 bytes, not \(key.count)") }
        guard iv.count == 8 || iv.count == 16 else { throw Failure("an IV is 8 or 16 bytes, not \(iv.count)") }
        guard pattern.crypt >= 0, pattern.skip >= 0, pattern.crypt <= 255, pattern.skip <= 255 else {
            throw Failure("the pattern \(pattern.crypt):\(pattern.skip) is not one of 0 to 255 blocks each")
        }
        // The protected runs, checked against the sample's size.
        var runs: [Range<Int>] = []
        if subsamples.isEmpty {
            runs = [0..<sample.count]
        } else {
            var offset = 0
            for subsample in subsamples {
                guard subsample.clear >= 0, subsample.protected >= 0 else { throw Failure("a negative subsample") }
                let (start, over1) = offset.addingReportingOverflow(subsample.clear)
                let (end, over2) = start.addingReportingOverflow(subsample.protected)
                guard !over1, !over2, end <= sample.count else {
                    throw Failure("the subsamples cover \(end) bytes of a \(sample.count)-byte sample")
                }
                if subsample.protected > 0 { runs.append(start..<end) }
                offset = end
            }
        }
        let block = iv + [UInt8](repeating: 0, count: 16 - iv.count)
        let symmetric = SymmetricKey(data: key)
        do {
            switch scheme {
            case .cenc:
                // The protected bytes of the sample, end to end, are one counter-mode stream.
                var gathered = [UInt8]()
                gathered.reserveCapacity(runs.reduce(0) { $0 + $1.count })
                for run in runs { gathered += sample[run] }
                let clear = try AES._CTR.decrypt(
                    gathered, using: symmetric, nonce: try AES._CTR.Nonce(nonceBytes: block))
                var offset = clear.startIndex
                for run in runs {
                    let end = offset + run.count
                    UnsafeMutableRawBufferPointer(rebasing: sample[run]).copyBytes(from: clear[offset..<end])
                    offset = end
                }
            case .cbcs:
                let vector = try AES._CBC.IV(ivBytes: block)
                for run in runs {
                    // The encrypted blocks of the run, in a chain: every `crypt` blocks, then `skip` left clear.
                    var blocks: [Range<Int>] = []
                    var at = run.lowerBound
                    let (crypt, skip) = pattern.crypt == 0 && pattern.skip == 0 ? (1, 0) : pattern
                    while at + 16 <= run.upperBound {
                        for _ in 0..<crypt where at + 16 <= run.upperBound {
                            blocks.append(at..<at + 16)
                            at += 16
                        }
                        at += 16 * skip
                    }
                    guard !blocks.isEmpty else { continue }
                    var gathered = [UInt8]()
                    gathered.reserveCapacity(blocks.count * 16)
                    for range in blocks { gathered += sample[range] }
                    let clear = try AES._CBC.decrypt(gathered, using: symmetric, iv: vector, noPadding: true)
                    var offset = clear.startIndex
                    for range in blocks {
                        UnsafeMutableRawBufferPointer(rebasing: sample[range]).copyBytes(
                            from: clear[offset..<offset + 16])
                        offset += 16
                    }
                }
            }
        } catch let failure as Failure {
            throw failure
        } catch {
            throw Failure("AES failed: \(error)")
        }
    }
}
