/// A seeded SplitMix64 generator: a damaged case is made again, byte for byte, from its seed.
public struct SeededGenerator: RandomNumberGenerator, Sendable {
    public var state: UInt64

    public init(seed: UInt64) { state = seed }

    public mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

/// A reproducible corpus of damaged media: each case is a valid file (MP4, fragmented MP4, MPEG-TS, JPEG or PNG)
/// damaged one way, chosen by its seed. The damage knows the container: it swaps whole boxes, packets, segments or
/// chunks, writes absurd counts and dimensions into the fields that hold them, and changes codec parameters (the
/// sample entry, `avcC`, the SPS, the PMT's stream type, SOF, IHDR) with checksums recomputed where the format has
/// them, so the damage reaches the code behind the checksum.
public enum DamagedMedia {
    /// The kinds of file damaged.
    public enum Container: String, CaseIterable, Sendable {
        case mp4, fmp4, ts, jpeg, png
    }

    /// The kinds of damage.
    public enum Damage: String, CaseIterable, Sendable {
        /// The file cut short: in its header, anywhere, or near its end.
        case truncation
        /// 1 to 32 bits flipped, half of the time inside the file's header.
        case bitFlips = "bit-flips"
        /// 1 to 4,096 bytes zeroed.
        case zeroedRange = "zeroed-range"
        /// Two sibling boxes (MP4), packets (TS), marker segments (JPEG) or chunks (PNG) exchanged.
        case swappedBoxes = "swapped-boxes"
        /// A count set to 0, 1 or something huge: sample, entry and chunk counts, timescales, PES and section
        /// lengths, Huffman table sizes, chunk lengths.
        case absurdCounts = "absurd-counts"
        /// Dimensions set to 0, 1 or something huge: `tkhd`, the sample entry, the SPS (re-encoded), SOF, IHDR.
        case absurdDimensions = "absurd-dimensions"
        /// Codec parameters that do not fit the data: another codec's four-character code or stream type, NAL
        /// length sizes, profiles, a garbled PPS, SOF precision and sampling, PNG bit depth and colour type.
        case wrongCodecParameters = "wrong-codec-parameters"
    }

    /// One damaged file.
    public struct Case: Sendable {
        public var container: Container
        public var damage: Damage
        public var seed: UInt64
        public var bytes: [UInt8]
        /// What was done, for the report of a case that fails.
        public var note: String
    }

    /// Damages `bytes`, a valid file of kind `container`, one way of kind `damage`, as `seed` chooses.
    public static func damage(_ bytes: [UInt8], as container: Container, with damage: Damage, seed: UInt64) -> Case {
        var random = SeededGenerator(seed: seed ^ 0x5DEE_CE66_D1CE_4E5B)
        var damaged = bytes
        let note = apply(damage, to: &damaged, container: container, random: &random)
        return Case(container: container, damage: damage, seed: seed, bytes: damaged, note: note)
    }

    private static func apply(
        _ damage: Damage, to bytes: inout [UInt8], container: Container, random: inout SeededGenerator
    ) -> String {
        let header = headerRange(bytes, container)
        switch damage {
        case .truncation:
            guard bytes.count > 1 else { return "nothing to cut" }
            let end: Int
            switch Int.random(in: 0..<3, using: &random) {
            case 0: end = Int.random(in: 0..<max(1, min(header.upperBound, bytes.count - 1)), using: &random)
            case 1: end = Int.random(in: 0..<bytes.count, using: &random)
            default: end = Int.random(in: (bytes.count * 9 / 10)..<bytes.count, using: &random)
            }
            bytes.removeSubrange(end...)
            return "cut at \(end)"
        case .bitFlips:
            let flips = Int.random(in: 1...32, using: &random)
            for _ in 0..<flips where !bytes.isEmpty {
                let range = Bool.random(using: &random) ? header : 0..<bytes.count
                let i = Int.random(in: range, using: &random)
                bytes[i] ^= 1 << UInt8.random(in: 0..<8, using: &random)
            }
            return "\(flips) bits flipped"
        case .zeroedRange:
            guard !bytes.isEmpty else { return "nothing to zero" }
            let range = Bool.random(using: &random) ? header : 0..<bytes.count
            let start = Int.random(in: range, using: &random)
            let end = min(bytes.count, start + Int.random(in: 1...4096, using: &random))
            for i in start..<end { bytes[i] = 0 }
            return "zeroed \(start)..<\(end)"
        case .swappedBoxes, .absurdCounts, .absurdDimensions, .wrongCodecParameters:
            let note: String?
            switch container {
            case .mp4, .fmp4: note = ISOBMFFDamage.apply(damage, to: &bytes, random: &random)
            case .ts: note = TransportStreamDamage.apply(damage, to: &bytes, random: &random)
            case .jpeg: note = JPEGDamage.apply(damage, to: &bytes, random: &random)
            case .png: note = PNGDamage.apply(damage, to: &bytes, random: &random)
            }
            if let note { return note }
            // The structure the damage needs is missing: flip bits in the header instead.
            return "no target for \(damage.rawValue); "
                + apply(.bitFlips, to: &bytes, container: container, random: &random)
        }
    }

    /// Where the file's metadata lies (the `moov` and first `moof`, the first TS packets, the JPEG header before
    /// the scan, the PNG header chunks).
    private static func headerRange(_ bytes: [UInt8], _ container: Container) -> Range<Int> {
        guard !bytes.isEmpty else { return 0..<0 }
        var end = min(bytes.count, 4096)
        switch container {
        case .mp4, .fmp4:
            let boxes = ISOBMFFDamage.topLevel(bytes)
            if let moov = boxes.first(where: { $0.type == "moov" }) {
                let moof = boxes.first(where: { $0.type == "moof" })
                return moov.start..<min(bytes.count, max(moov.end, moof?.end ?? 0))
            }
        case .ts:
            end = min(bytes.count, 188 * 12)
        case .jpeg:
            end = JPEGDamage.segments(bytes).last.map { min(bytes.count, $0.start + 16) } ?? end
        case .png:
            end = min(bytes.count, 64)
        }
        return 0..<end
    }
}

// MARK: Byte helpers shared by the containers

extension [UInt8] {
    func be16(_ i: Int) -> Int { Int(self[i]) << 8 | Int(self[i + 1]) }
    func be32(_ i: Int) -> UInt32 { (0..<4).reduce(0) { $0 << 8 | UInt32(self[i + $1]) } }
    mutating func setBE16(_ i: Int, _ value: Int) {
        self[i] = UInt8((value >> 8) & 0xFF)
        self[i + 1] = UInt8(value & 0xFF)
    }
    mutating func setBE32(_ i: Int, _ value: UInt32) {
        for k in 0..<4 { self[i + k] = UInt8((value >> (24 - 8 * UInt32(k))) & 0xFF) }
    }
    func fourCC(_ i: Int) -> String { String(decoding: self[i..<i + 4], as: UTF8.self) }
    /// Exchanges two ranges, `a` before `b`, that do not overlap.
    mutating func exchange(_ a: Range<Int>, _ b: Range<Int>) {
        self =
            Array(self[..<a.lowerBound]) + self[b] + self[a.upperBound..<b.lowerBound] + self[a] + self[b.upperBound...]
    }
}

/// Counts and sizes a damaged field is set to: empty, one, and the largest values each width holds.
enum AbsurdValues {
    static func uint32(_ random: inout SeededGenerator) -> UInt32 {
        [0, 1, 0x7FFF_FFFF, 0xFFFF_FFFF, 0x0100_0000, UInt32.random(in: 1_000_000...UInt32.max, using: &random)]
            .randomElement(using: &random)!
    }
    static func uint16(_ random: inout SeededGenerator) -> Int {
        [0, 1, 0x7FFF, 0xFFFF, 16_384, Int.random(in: 4_096...0xFFFF, using: &random)].randomElement(using: &random)!
    }
}

/// An H.264 sequence parameter set declaring `widthInMacroblocks` x `heightInMapUnits` (Baseline, no VUI),
/// zero-padded to `length` bytes when it is shorter (decoders ignore bytes after the stop bit).
func syntheticSPS(widthInMacroblocks: Int, heightInMapUnits: Int, length: Int) -> [UInt8] {
    var bits: [Bool] = []
    func ue(_ value: Int) {
        let code = value + 1
        let width = Int.bitWidth - code.leadingZeroBitCount
        bits += Array(repeating: false, count: width - 1)
        for k in (0..<width).reversed() { bits.append(code >> k & 1 == 1) }
    }
    ue(0)  // seq_parameter_set_id
    ue(0)  // log2_max_frame_num_minus4
    ue(2)  // pic_order_cnt_type
    ue(1)  // max_num_ref_frames
    bits.append(false)  // gaps_in_frame_num_value_allowed_flag
    ue(widthInMacroblocks - 1)
    ue(heightInMapUnits - 1)
    bits += [true, true, false, false, true]  // frame_mbs_only, direct_8x8, no cropping, no VUI, stop bit
    var rbsp: [UInt8] = [0x67, 66, 0xC0, 30]
    for start in stride(from: 0, to: bits.count, by: 8) {
        var byte: UInt8 = 0
        for k in 0..<8 where start + k < bits.count && bits[start + k] { byte |= 0x80 >> UInt8(k) }
        rbsp.append(byte)
    }
    // Emulation prevention: no 00 00 0x (x <= 3) inside the NAL.
    var nal: [UInt8] = []
    var zeros = 0
    for byte in rbsp {
        if zeros >= 2 && byte <= 3 {
            nal.append(3)
            zeros = 0
        }
        nal.append(byte)
        zeros = byte == 0 ? zeros + 1 : 0
    }
    return nal.count >= length ? nal : nal + Array(repeating: 0, count: length - nal.count)
}

/// Replaces the SPS at `range` with one of the same length declaring an absurd size (none, one, or thousands of
/// macroblocks a side); `nil` when such an SPS does not fit.
func replaceSPS(_ range: Range<Int>, in bytes: inout [UInt8], random: inout SeededGenerator) -> String? {
    let sides = [1, 2, 1024, 2048, 4096, 8192]
    let (w, h) = (sides.randomElement(using: &random)!, sides.randomElement(using: &random)!)
    let replacement = syntheticSPS(widthInMacroblocks: w, heightInMapUnits: h, length: range.count)
    guard replacement.count == range.count else { return nil }
    bytes.replaceSubrange(range, with: replacement)
    return "SPS declaring \(w * 16)x\(h * 16)"
}
