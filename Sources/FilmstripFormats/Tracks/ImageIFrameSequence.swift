public import Foundation

/// Apple's HLS "I-frame image sequence" (HLS Authoring Specification, appendix): JPEG images as the samples of a
/// fragmented MP4 file (sample entry `mjpg`), one fragment per image, each addressed by one `EXT-X-BYTERANGE` of an
/// I-frame playlist (`EXT-X-I-FRAMES-ONLY`, `EXT-X-MAP` on the initialisation section) whose durations are the
/// images' intervals. A master lists it with `EXT-X-I-FRAME-STREAM-INF` and `CODECS="mjpg"`.
///
/// The writer is conservative: one track (ID 1), one `traf` per fragment with `default-base-is-moof`, a version-1
/// `tfdt` on the main timeline, and one `trun` giving the data offset, the duration, the size and sync flags of its one
/// sample, so that a reader needs nothing from the `trex` defaults.
public struct ImageIFrameSequence: Sendable, Hashable {
    /// One image: its start on the video's timeline and how long it stands, in milliseconds, and its JPEG bytes.
    public struct Image: Sendable, Hashable {
        public var start: Int64
        public var duration: Int64
        public var jpeg: Data

        /// Creates an image.
        public init(start: Int64, duration: Int64, jpeg: Data) {
            self.start = start
            self.duration = duration
            self.jpeg = jpeg
        }
    }

    /// The whole file: the initialisation section, then one `moof`+`mdat` per image.
    public var file: Data
    /// The initialisation section's length (it starts at byte 0).
    public var initializationLength: Int
    /// Each image's fragment, `offset..<offset + length` of ``file``.
    public var fragments: [Range<Int>]
    /// The images' durations, in milliseconds, in order.
    public var durations: [Int64]
    /// The images' width in pixels.
    public var width: Int
    /// The images' height in pixels.
    public var height: Int

    /// The playlist's file name as `generate` writes it.
    public static let playlistName = "iframe-images.m3u8"
    /// The media file's name as `generate` writes it.
    public static let mediaName = "iframe-images.mp4"

    /// The timescale of the track: milliseconds.
    public static let timescale: UInt32 = 1000

    /// Writes `images` (in time order) of `width` x `height` pixels; the fragments' sequence numbers count from
    /// `firstSequence` (a live sequence written in parts goes on counting).
    public init(images: [Image], width: Int, height: Int, firstSequence: UInt32 = 1) {
        var file = Self.initialization(width: width, height: height)
        initializationLength = file.count
        var fragments: [Range<Int>] = []
        for (index, image) in images.enumerated() {
            let start = file.count
            file.append(Self.fragment(image, sequence: firstSequence &+ UInt32(truncatingIfNeeded: index)))
            fragments.append(start..<file.count)
        }
        self.file = file
        self.fragments = fragments
        durations = images.map(\.duration)
        self.width = width
        self.height = height
    }

    /// The peak bits per second: the largest fragment's bits over its image's time (what `BANDWIDTH` states).
    public var peakBandwidth: Int {
        zip(fragments, durations).map { range, duration in
            Int((Double(range.count * 8) / max(0.001, Double(duration) / 1000)).rounded(.up))
        }.max() ?? 0
    }

    /// The average bits per second over the whole sequence (what `AVERAGE-BANDWIDTH` states).
    public var averageBandwidth: Int {
        let seconds = Double(durations.reduce(0, +)) / 1000
        let bytes = fragments.reduce(0) { $0 + $1.count }
        return Int((Double(bytes * 8) / max(0.001, seconds)).rounded(.up))
    }

    /// What a master says of the sequence.
    public var stream: Stream {
        Stream(bandwidth: peakBandwidth, averageBandwidth: averageBandwidth, width: width, height: height)
    }

    /// What a master's `EXT-X-I-FRAME-STREAM-INF` line says of an I-frame image sequence.
    public struct Stream: Sendable, Hashable {
        /// `BANDWIDTH`: the peak bits per second.
        public var bandwidth: Int
        /// `AVERAGE-BANDWIDTH`.
        public var averageBandwidth: Int
        /// `RESOLUTION`: the images' size.
        public var width: Int
        public var height: Int

        /// Creates a description.
        public init(bandwidth: Int, averageBandwidth: Int, width: Int, height: Int) {
            (self.bandwidth, self.averageBandwidth, self.width, self.height) = (
                bandwidth, averageBandwidth, width, height
            )
        }

        /// The master's line for the playlist at `uri` (relative to the master).
        public func line(uri: String) -> String {
            "#EXT-X-I-FRAME-STREAM-INF:BANDWIDTH=\(max(1, bandwidth)),AVERAGE-BANDWIDTH=\(max(1, averageBandwidth)),"
                + "CODECS=\"mjpg\",RESOLUTION=\(width)x\(height),VIDEO-RANGE=SDR,URI=\"\(uri)\""
        }
    }

    /// The I-frame playlist over ``file``, named `mediaName` relative to the playlist (version 7: byte ranges of an
    /// `EXT-X-MAP` and I-frames only need at least 5; a VOD playlist that ends).
    public func playlist(mediaName: String) -> String {
        let longest = durations.max() ?? 1000
        var lines = [
            "#EXTM3U", "#EXT-X-VERSION:7",
            "#EXT-X-TARGETDURATION:\(max(1, Int((Double(longest) / 1000).rounded(.up))))",
            "#EXT-X-MEDIA-SEQUENCE:0", "#EXT-X-PLAYLIST-TYPE:VOD", "#EXT-X-I-FRAMES-ONLY",
            "#EXT-X-MAP:URI=\"\(mediaName)\",BYTERANGE=\"\(initializationLength)@0\"",
        ]
        for (duration, range) in zip(durations, fragments) {
            lines.append(String(format: "#EXTINF:%.3f,", Double(duration) / 1000))
            lines.append("#EXT-X-BYTERANGE:\(range.count)@\(range.lowerBound)")
            lines.append(mediaName)
        }
        lines.append("#EXT-X-ENDLIST")
        return lines.joined(separator: "\n") + "\n"
    }

    // MARK: Boxes

    private static func initialization(width: Int, height: Int) -> Data {
        let w = UInt16(clamping: width)
        let h = UInt16(clamping: height)
        var out = box("ftyp", fourCC("iso6") + u32(0) + fourCC("iso6") + fourCC("isom") + fourCC("mp41"))
        let matrix = [0x0001_0000, 0, 0, 0, 0x0001_0000, 0, 0, 0, 0x4000_0000].flatMap { u32(UInt32($0)) }
        let mvhd = fullBox(
            "mvhd", version: 0, flags: 0,
            u32(0) + u32(0) + u32(timescale) + u32(0) + u32(0x0001_0000) + u16(0x0100) + zeros(10) + matrix + zeros(24)
                + u32(2))
        let tkhd = fullBox(
            "tkhd", version: 0, flags: 3,
            u32(0) + u32(0) + u32(1) + u32(0) + u32(0) + zeros(8) + u16(0) + u16(0) + u16(0) + u16(0) + matrix
                + u32(UInt32(w) << 16) + u32(UInt32(h) << 16))
        let mdhd = fullBox(
            "mdhd", version: 0, flags: 0, u32(0) + u32(0) + u32(timescale) + u32(0) + u16(0x55C4) + u16(0))
        let hdlr = fullBox("hdlr", version: 0, flags: 0, u32(0) + fourCC("vide") + zeros(12) + Array("Images\0".utf8))
        let vmhd = fullBox("vmhd", version: 0, flags: 1, zeros(8))
        let dinf = box(
            "dinf", fullBox("dref", version: 0, flags: 0, u32(1) + fullBox("url ", version: 0, flags: 1, [])))
        // VisualSampleEntry `mjpg`: 72 dpi, one frame per sample, 24-bit depth, no colour table; then the colour
        // (`colr` nclx: BT.709 primaries and transfer, the BT.601 matrix and the full range a JFIF JPEG has), the
        // field handling (`fiel`: progressive) and the square pixels (`pasp` 1:1) that Apple's appendix lists.
        let colr = box("colr", fourCC("nclx") + u16(1) + u16(1) + u16(6) + [0x80])
        let fiel = box("fiel", [1, 0])
        let pasp = box("pasp", u32(1) + u32(1))
        let mjpg = box(
            "mjpg",
            zeros(6) + u16(1) + zeros(16) + u16(w) + u16(h) + u32(0x0048_0000) + u32(0x0048_0000) + u32(0) + u16(1)
                + zeros(32) + u16(0x0018) + u16(0xFFFF) + colr + fiel + pasp)
        let stbl = box(
            "stbl",
            fullBox("stsd", version: 0, flags: 0, u32(1) + mjpg) + fullBox("stts", version: 0, flags: 0, u32(0))
                + fullBox("stsc", version: 0, flags: 0, u32(0)) + fullBox("stsz", version: 0, flags: 0, u32(0) + u32(0))
                + fullBox("stco", version: 0, flags: 0, u32(0)))
        let mdia = box("mdia", mdhd + hdlr + box("minf", vmhd + dinf + stbl))
        let trak = box("trak", tkhd + mdia)
        let trex = fullBox("trex", version: 0, flags: 0, u32(1) + u32(1) + u32(0) + u32(0) + u32(0))
        out += box("moov", mvhd + trak + box("mvex", trex))
        return Data(out)
    }

    private static func fragment(_ image: Image, sequence: UInt32) -> Data {
        let size = UInt32(clamping: image.jpeg.count)
        let mfhd = fullBox("mfhd", version: 0, flags: 0, u32(sequence))
        // default-base-is-moof; the track's defaults are not relied on.
        let tfhd = fullBox("tfhd", version: 0, flags: 0x02_0000, u32(1))
        let tfdt = fullBox("tfdt", version: 1, flags: 0, u64(UInt64(clamping: max(0, image.start))))
        // data-offset, sample-duration, sample-size and sample-flags present; a sync sample (depends on no other).
        func trun(offset: UInt32) -> [UInt8] {
            fullBox(
                "trun", version: 0, flags: 0x00_0701,
                u32(1) + u32(offset) + u32(UInt32(clamping: max(0, image.duration))) + u32(size) + u32(0x0200_0000))
        }
        // The moof's size does not depend on the offset's value: measure it once, then write the real offset.
        let length = box("moof", mfhd + box("traf", tfhd + tfdt + trun(offset: 0))).count
        let moof = box("moof", mfhd + box("traf", tfhd + tfdt + trun(offset: UInt32(length + 8))))
        return Data(moof + box("mdat", [UInt8](image.jpeg)))
    }

    private static func box(_ type: String, _ payload: [UInt8]) -> [UInt8] {
        u32(UInt32(clamping: payload.count + 8)) + fourCC(type) + payload
    }

    private static func fullBox(_ type: String, version: UInt8, flags: UInt32, _ payload: [UInt8]) -> [UInt8] {
        box(
            type,
            [
                version, UInt8(truncatingIfNeeded: flags >> 16), UInt8(truncatingIfNeeded: flags >> 8),
                UInt8(truncatingIfNeeded: flags),
            ] + payload)
    }

    private static func fourCC(_ text: String) -> [UInt8] { Array(text.utf8.prefix(4)) }
    private static func zeros(_ count: Int) -> [UInt8] { [UInt8](repeating: 0, count: count) }
    private static func u16(_ value: UInt16) -> [UInt8] { [UInt8(value >> 8), UInt8(value & 0xFF)] }
    private static func u32(_ value: UInt32) -> [UInt8] {
        (0..<4).map { UInt8(truncatingIfNeeded: value >> (24 - 8 * $0)) }
    }
    private static func u64(_ value: UInt64) -> [UInt8] {
        (0..<8).map { UInt8(truncatingIfNeeded: value >> (56 - 8 * $0)) }
    }
}

// MARK: Reading

extension ImageIFrameSequence {
    /// Whether `initialization` (an `EXT-X-MAP`'s bytes) describes an image sequence: its first track's first sample
    /// entry is `mjpg`.
    public static func describesImages(initialization: Data) -> Bool {
        guard let stsd = try? ISOBoxes.find(["moov", "trak", "mdia", "minf", "stbl", "stsd"], in: initialization),
            stsd.payload.count >= 16
        else { return false }
        // A full box: version and flags, the entry count, then the sample entries (boxes).
        let entries = (stsd.payload.lowerBound + 8)..<stsd.payload.upperBound
        return (try? ISOBoxes(initialization, in: entries))?.boxes.first?.type == "mjpg"
    }

    /// The JPEG of one fragment (a playlist entry's bytes: `moof` then `mdat`): the `mdat`'s payload.
    public static func image(inFragment fragment: Data) throws(ISOBoxes.ParseError) -> Data {
        let boxes = try ISOBoxes(fragment)
        guard boxes.first("moof") != nil, let mdat = boxes.first("mdat") else {
            throw ISOBoxes.ParseError(message: "an I-frame image fragment must hold a moof and an mdat")
        }
        let payload = fragment[mdat.payload]
        guard payload.count >= 4, payload.first == 0xFF, payload[payload.startIndex + 1] == 0xD8 else {
            throw ISOBoxes.ParseError(message: "the fragment's mdat does not hold a JPEG")
        }
        return Data(payload)
    }
}
