public import Foundation

/// Reads Roku BIF archives: a little-endian header (magic `89 42 49 46 0D 0A 1A 0A`, version 0, image count, a
/// timestamp multiplier in milliseconds where 0 means 1000), an index of `count + 1` (timestamp, offset) pairs whose
/// last timestamp is `0xFFFFFFFF`, then the JPEG images. Image *i* spans `offset[i] ..< offset[i+1]` and is shown
/// from `timestamp[i]·multiplier` ms until the next image's time; the last one for as long as the gap before it.
///
/// ```swift
/// let track = try BIFParser().parse(bifBytes, url: bifURL)   // every image is a byte range of bifURL
/// ```
public struct BIFParser: Sendable {
    /// The BIF magic number.
    public static let magic: [UInt8] = [0x89, 0x42, 0x49, 0x46, 0x0D, 0x0A, 0x1A, 0x0A]

    /// Why a BIF could not be read: a message and the byte offset concerned.
    public struct ParseError: Error, Sendable, Hashable, CustomStringConvertible {
        /// A human-readable explanation.
        public var message: String
        /// The byte offset of the problem.
        public var offset: Int
        /// `BIF at byte N: message`.
        public var description: String { "BIF at byte \(offset): \(message)" }
    }

    /// The most images accepted. Default 1,000,000.
    public var maximumImages: Int

    /// Creates a parser.
    public init(maximumImages: Int = 1_000_000) { self.maximumImages = maximumImages }

    /// Parses a BIF fetched from `url`; the track's images are byte ranges of `url`.
    public func parse(_ bytes: some ContiguousBytes, url: URL) throws(ParseError) -> ThumbnailTrack {
        let result: Result<ThumbnailTrack, ParseError> = bytes.withUnsafeBytes { raw in
            Result { () throws(ParseError) in try parse(raw: raw, url: url) }
        }
        return try result.get()
    }

    private func parse(raw: UnsafeRawBufferPointer, url: URL) throws(ParseError) -> ThumbnailTrack {
        func u32(_ at: Int) throws(ParseError) -> UInt32 {
            guard at + 4 <= raw.count else { throw ParseError(message: "the file is cut short", offset: raw.count) }
            return UInt32(raw[at]) | UInt32(raw[at + 1]) << 8 | UInt32(raw[at + 2]) << 16 | UInt32(raw[at + 3]) << 24
        }
        guard raw.count >= 8, Array(raw[0..<8]) == Self.magic else {
            throw ParseError(message: "not a BIF (the magic number is missing)", offset: 0)
        }
        guard raw.count >= 64 else { throw ParseError(message: "the header is cut short", offset: raw.count) }
        let version = try u32(8)
        guard version == 0 else { throw ParseError(message: "unsupported BIF version \(version)", offset: 8) }
        let count = Int(try u32(12))
        guard count <= maximumImages else {
            throw ParseError(message: "\(count) images; the limit is \(maximumImages)", offset: 12)
        }
        let multiplier = Int64(try u32(16) == 0 ? 1000 : try u32(16))
        // At most an hour per unit, so a 32-bit timestamp times it stays far inside 64 bits.
        guard multiplier <= 3_600_000 else {
            throw ParseError(message: "a timestamp multiplier of \(multiplier) ms is not a BIF's", offset: 16)
        }
        let indexEnd = 64 + (count + 1) * 8
        guard indexEnd <= raw.count else {
            throw ParseError(
                message: "the index of \(count) images needs \(indexEnd) bytes; the file has \(raw.count)",
                offset: raw.count)
        }
        var starts: [Int64] = []
        var offsets: [Int64] = []
        starts.reserveCapacity(count)
        offsets.reserveCapacity(count + 1)
        for i in 0...count {
            let at = 64 + i * 8
            let timestamp = try u32(at)
            let offset = Int64(try u32(at + 4))
            if i == count {
                guard timestamp == 0xFFFF_FFFF else {
                    throw ParseError(
                        message: "the header says \(count) images, but index entry \(i) is not the end marker",
                        offset: at)
                }
            } else {
                guard timestamp != 0xFFFF_FFFF else {
                    throw ParseError(
                        message: "the header says \(count) images, but the index ends after \(i)", offset: at)
                }
                let start = Int64(timestamp) * multiplier
                if let last = starts.last, start < last {
                    throw ParseError(message: "image \(i)'s time is before image \(i - 1)'s", offset: at)
                }
                starts.append(start)
            }
            guard offset >= Int64(indexEnd), offset <= Int64(raw.count) else {
                throw ParseError(
                    message: "image offset \(offset) lies outside the data (\(indexEnd)..<\(raw.count))", offset: at + 4
                )
            }
            if let last = offsets.last, offset <= last {
                throw ParseError(message: "image offsets are out of order at entry \(i)", offset: at + 4)
            }
            offsets.append(offset)
        }
        var cues: [ThumbnailCue] = []
        cues.reserveCapacity(count)
        for i in 0..<count {
            let end: Int64
            if i + 1 < count {
                end = max(starts[i + 1], starts[i] + 1)
            } else {
                end = starts[i] + (count > 1 ? max(1, starts[i] - starts[i - 1]) : multiplier)
            }
            cues.append(
                ThumbnailCue(startMilliseconds: starts[i], endMilliseconds: end, imageIndex: 0, identifier: nil))
            cues[i].imageIndex = Int32(i)
        }
        var track = ThumbnailTrack(
            sourceURL: url, cues: cues, images: Array(repeating: url, count: count))
        track.format = .bif
        track.imageByteRanges = (0..<count).map { offsets[$0]..<offsets[$0 + 1] }
        track.findings = Self.imageFindings(raw, offsets: offsets)
        return track
    }

    /// The largest image a BIF may hold, in pixels (what the decoder allows); Roku's own are a few hundred wide.
    static let maximumPixels = 50_000_000

    /// What the images' headers say that players trip over: an image that is not a JPEG (Roku shows only JPEGs) and
    /// one that declares more pixels than a decoder allows (a decompression bomb: never decoded). The first 20 of
    /// each, then a count.
    static func imageFindings(_ raw: UnsafeRawBufferPointer, offsets: [Int64]) -> [TrackFinding] {
        var notJPEG: [Int] = []
        var bombs: [(Int, Int, Int)] = []
        var findings: [TrackFinding] = []
        for i in 0..<(offsets.count - 1) {
            let slice = UnsafeRawBufferPointer(rebasing: raw[Int(offsets[i])..<Int(offsets[i + 1])])
            let header = ImageHeader(slice)
            if header.format != .jpeg {
                notJPEG.append(i)
                if notJPEG.count <= 20 {
                    let kind = header.format == .unknown ? "not an image format Filmstrip knows" : "a \(header.format)"
                    findings.append(
                        TrackFinding(
                            .error, "the image is \(kind), not a JPEG: Roku devices show only JPEG images",
                            location: "image \(i)"))
                }
            }
            if let pixels = header.pixelCount, pixels > maximumPixels, let w = header.width, let h = header.height {
                bombs.append((i, w, h))
                if bombs.count <= 20 {
                    findings.append(
                        TrackFinding(
                            .error,
                            "the image declares \(w)x\(h) px, past the \(maximumPixels / 1_000_000) Mpx an image may "
                                + "have (a decompression bomb): it is never decoded", location: "image \(i)"))
                }
            }
        }
        if notJPEG.count > 20 {
            findings.append(TrackFinding(.error, "\(notJPEG.count) images in all are not JPEGs"))
        }
        if bombs.count > 20 { findings.append(TrackFinding(.error, "\(bombs.count) images in all are too large")) }
        return findings
    }
}
