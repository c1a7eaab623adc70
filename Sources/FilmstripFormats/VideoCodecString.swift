public import Foundation

/// The RFC 6381 `CODECS` value of a video stream (`avc1.64001f`, `hvc1.1.6.L93.B0`, `av01.0.04M.08`), made from its
/// decoder configuration: the record an MP4 sample entry carries (`avcC`, `hvcC`, `av1C`), or the parameter sets of
/// an Annex B stream (MPEG-TS), as ISO/IEC 14496-15 and the AV1 ISOBMFF binding say to spell it.
public enum VideoCodecString {
    /// The codecs a string can be made for.
    public enum Codec: Sendable {
        case h264
        case hevc
        case av1
    }

    /// The string, or `nil` when `configuration` holds too few bytes or no parameter set to read it from.
    /// `sampleEntry` is the MP4 sample entry's four-character code (`avc1`, `avc3`, `hvc1`, `hev1`, `av01`); without
    /// one (MPEG-TS), `avc1`, `hvc1` and `av01`, the ones Apple's HLS authoring rules ask for.
    public static func make(_ codec: Codec, sampleEntry: String? = nil, configuration: Data) -> String? {
        let bytes = [UInt8](configuration)
        switch codec {
        case .h264:
            let entry = sampleEntry.flatMap { ["avc1", "avc3"].contains($0) ? $0 : nil } ?? "avc1"
            guard let fields = h264Fields(bytes) else { return nil }
            return entry + "." + fields.map { hex($0, width: 2) }.joined()
        case .hevc:
            let entry = sampleEntry.flatMap { ["hvc1", "hev1"].contains($0) ? $0 : nil } ?? "hvc1"
            guard let fields = hevcProfileTierLevel(bytes) else { return nil }
            return entry + "." + hevcSuffix(fields)
        case .av1:
            guard bytes.count >= 3, bytes[0] & 0x7F == 1 else { return nil }
            let profile = Int(bytes[1] >> 5)
            let level = Int(bytes[1] & 0x1F)
            let tier = bytes[2] & 0x80 != 0 ? "H" : "M"
            let depth = bytes[2] & 0x40 == 0 ? 8 : (profile == 2 && bytes[2] & 0x20 != 0 ? 12 : 10)
            return "av01.\(profile).\(level < 10 ? "0" : "")\(level)\(tier).\(depth < 10 ? "0" : "")\(depth)"
        }
    }

    /// `profile_idc`, the constraint flags and `level_idc`: bytes 1 to 3 of `avcC`, or the three after the header
    /// of the first sequence parameter set (NAL type 7).
    static func h264Fields(_ bytes: [UInt8]) -> [UInt8]? {
        if bytes.first == 1 {
            return bytes.count >= 4 ? Array(bytes[1...3]) : nil
        }
        for unit in annexBUnits(bytes) where unit.first.map({ $0 & 0x1F }) == 7 {
            let payload = unescaped(unit.dropFirst())
            if payload.count >= 3 { return Array(payload.prefix(3)) }
        }
        return nil
    }

    /// The 12 bytes of `general_profile_space` … `general_level_idc`: bytes 1 to 12 of `hvcC`, or of the first
    /// sequence parameter set (NAL type 33) after its two-byte header and its first byte.
    static func hevcProfileTierLevel(_ bytes: [UInt8]) -> [UInt8]? {
        if bytes.first == 1 {
            return bytes.count >= 13 ? Array(bytes[1...12]) : nil
        }
        for unit in annexBUnits(bytes) where unit.first.map({ ($0 >> 1) & 0x3F }) == 33 {
            let payload = unescaped(unit.dropFirst(2))
            if payload.count >= 13 { return Array(payload[1...12]) }
        }
        return nil
    }

    /// `P.C.TL.B…` after the sample entry (ISO/IEC 14496-15, annex E): the profile space's letter and the profile,
    /// the compatibility flags bit-reversed in hex, the tier's letter and the level, then the constraint bytes up
    /// to the last one that is not zero.
    static func hevcSuffix(_ ptl: [UInt8]) -> String {
        let space = ["", "A", "B", "C"][Int(ptl[0] >> 6)]
        let tier = ptl[0] & 0x20 != 0 ? "H" : "L"
        let profile = Int(ptl[0] & 0x1F)
        var flags: UInt32 = 0
        for byte in ptl[1...4] { flags = flags << 8 | UInt32(byte) }
        var reversed: UInt32 = 0
        for bit in 0..<32 where flags & (1 << UInt32(bit)) != 0 { reversed |= 1 << UInt32(31 - bit) }
        var constraints = Array(ptl[5...10])
        while constraints.last == 0 { constraints.removeLast() }
        var text = "\(space)\(profile).\(String(reversed, radix: 16, uppercase: true)).\(tier)\(ptl[11])"
        for byte in constraints { text += "." + String(byte, radix: 16, uppercase: true) }
        return text
    }

    /// The NAL units of an Annex B byte stream (start codes `00 00 01`, with or without a leading zero), headers
    /// included.
    static func annexBUnits(_ bytes: [UInt8]) -> [ArraySlice<UInt8>] {
        var starts: [Int] = []
        var i = 0
        while i + 2 < bytes.count {
            if bytes[i] == 0, bytes[i + 1] == 0, bytes[i + 2] == 1 {
                starts.append(i + 3)
                i += 3
            } else {
                i += 1
            }
        }
        return starts.enumerated().map { k, start in
            var end = k + 1 < starts.count ? starts[k + 1] - 3 : bytes.count
            while end > start, bytes[end - 1] == 0 { end -= 1 }
            return bytes[start..<end]
        }
    }

    /// A NAL unit's payload without its emulation prevention bytes (the `03` of each `00 00 03`).
    static func unescaped(_ payload: ArraySlice<UInt8>) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(payload.count)
        var zeros = 0
        for byte in payload {
            if zeros >= 2, byte == 3 {
                zeros = 0
                continue
            }
            zeros = byte == 0 ? zeros + 1 : 0
            out.append(byte)
        }
        return out
    }

    static func hex(_ byte: UInt8, width: Int) -> String {
        let digits = String(byte, radix: 16)
        return String(repeating: "0", count: max(0, width - digits.count)) + digits
    }
}
