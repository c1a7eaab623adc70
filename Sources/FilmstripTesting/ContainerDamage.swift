/// Structure-aware damage to MP4 and fragmented MP4: boxes are found by walking the tree.
enum ISOBMFFDamage {
    struct Box {
        var type: String
        var start: Int
        var contentStart: Int
        var end: Int
        /// The index of the parent box in the list, `nil` at the top level.
        var parent: Int?
    }

    private static let containers: Set<String> = [
        "moov", "trak", "mdia", "minf", "stbl", "moof", "traf", "mvex", "edts", "dinf", "mfra",
    ]

    static func topLevel(_ bytes: [UInt8]) -> [Box] { children(bytes, from: 0, to: bytes.count, parent: nil) }

    private static func children(_ bytes: [UInt8], from: Int, to: Int, parent: Int?) -> [Box] {
        var boxes: [Box] = []
        var i = from
        while i + 8 <= to {
            var size = Int(bytes.be32(i))
            var header = 8
            if size == 1, i + 16 <= to {
                size = Int(UInt64(bytes.be32(i + 8)) << 32 | UInt64(bytes.be32(i + 12)))
                header = 16
            } else if size == 0 {
                size = to - i
            }
            guard size >= header, size <= to - i else { break }
            boxes.append(
                Box(type: bytes.fourCC(i + 4), start: i, contentStart: i + header, end: i + size, parent: parent))
            i += size
        }
        return boxes
    }

    /// Every box in the file, parents before their children.
    static func all(_ bytes: [UInt8]) -> [Box] {
        var boxes = topLevel(bytes)
        var k = 0
        while k < boxes.count {
            let box = boxes[k]
            let first: Int? =
                switch box.type {
                case _ where containers.contains(box.type): box.contentStart
                case "stsd": box.contentStart + 8
                case "avc1", "avc3", "hvc1", "hev1": box.contentStart + 78
                default: nil
                }
            if let first, first <= box.end {
                boxes += children(bytes, from: first, to: box.end, parent: k)
            }
            k += 1
        }
        return boxes
    }

    static func apply(_ damage: DamagedMedia.Damage, to bytes: inout [UInt8], random: inout SeededGenerator) -> String?
    {
        let boxes = all(bytes)
        switch damage {
        case .swappedBoxes:
            // Siblings of one parent (the top level counts as one), two of them exchanged.
            let families = Dictionary(grouping: boxes.indices, by: { boxes[$0].parent ?? -1 }).values.filter {
                $0.count >= 2
            }
            guard let family = families.sorted(by: { $0[0] < $1[0] }).randomElement(using: &random) else { return nil }
            let picked = family.shuffled(using: &random).prefix(2).sorted()
            let (a, b) = (boxes[picked[0]], boxes[picked[1]])
            bytes.exchange(a.start..<a.end, b.start..<b.end)
            return "swapped \(a.type)@\(a.start) and \(b.type)@\(b.start)"
        case .absurdCounts:
            // (box, offset of the count from the box's content, name)
            let fields: [(String, Int)] = [
                ("stsz", 8), ("stts", 4), ("stsc", 4), ("stco", 4), ("co64", 4), ("stss", 4), ("ctts", 4),
                ("elst", 4), ("trun", 4), ("stsd", 4), ("mdhd", 12), ("mvhd", 12),
            ]
            let candidates = boxes.flatMap { box in
                fields.filter { $0.0 == box.type && box.contentStart + $0.1 + 4 <= box.end }.map { (box, $0.1) }
            }
            guard let (box, offset) = candidates.randomElement(using: &random) else { return nil }
            // mdhd and mvhd version 1 keep 64-bit times before the timescale.
            let at =
                box.contentStart + offset
                + ((box.type == "mdhd" || box.type == "mvhd") && bytes[box.contentStart] == 1 ? 8 : 0)
            guard at + 4 <= box.end else { return nil }
            let value = AbsurdValues.uint32(&random)
            bytes.setBE32(at, value)
            return "\(box.type) count/timescale at \(at) = \(value)"
        case .absurdDimensions:
            switch Int.random(in: 0..<3, using: &random) {
            case 0:
                guard let tkhd = boxes.filter({ $0.type == "tkhd" }).randomElement(using: &random) else { return nil }
                let at = tkhd.contentStart + (bytes[tkhd.contentStart] == 1 ? 88 : 76)
                guard at + 8 <= tkhd.end else { return nil }
                let (w, h) = (AbsurdValues.uint32(&random), AbsurdValues.uint32(&random))
                bytes.setBE32(at, w)
                bytes.setBE32(at + 4, h)
                return "tkhd size \(w >> 16)x\(h >> 16)"
            case 1:
                guard let entry = boxes.first(where: { ["avc1", "avc3"].contains($0.type) }) else { return nil }
                let (w, h) = (AbsurdValues.uint16(&random), AbsurdValues.uint16(&random))
                bytes.setBE16(entry.contentStart + 24, w)
                bytes.setBE16(entry.contentStart + 26, h)
                return "sample entry size \(w)x\(h)"
            default:
                guard let sps = spsRange(bytes, boxes) else { return nil }
                return replaceSPS(sps, in: &bytes, random: &random)
            }
        case .wrongCodecParameters:
            guard let entry = boxes.first(where: { ["avc1", "avc3"].contains($0.type) }),
                let avcC = boxes.first(where: { $0.type == "avcC" }), avcC.contentStart + 7 <= avcC.end
            else { return nil }
            switch Int.random(in: 0..<5, using: &random) {
            case 0:
                let code = ["hvc1", "mp4v", "av01", "vp09", "jpeg", "xxxx"].randomElement(using: &random)!
                bytes.replaceSubrange(entry.start + 4..<entry.start + 8, with: Array(code.utf8))
                return "sample entry \(code)"
            case 1:
                let size = [0, 1, 2].randomElement(using: &random)!
                bytes[avcC.contentStart + 4] = 0xFC | UInt8(size)
                return "NAL length size \(size + 1)"
            case 2:
                let profile = [0, 1, 44, 255].randomElement(using: &random)!
                bytes[avcC.contentStart + 1] = UInt8(profile)
                if let sps = spsRange(bytes, boxes) { bytes[sps.lowerBound + 1] = UInt8(profile) }
                return "profile \(profile)"
            case 3:
                // The PPS garbled (it follows the SPS: count, length, NAL).
                guard let sps = spsRange(bytes, boxes), sps.upperBound + 3 < avcC.end else { return nil }
                let start = sps.upperBound + 3
                for i in start + 1..<avcC.end { bytes[i] = UInt8.random(in: 0...255, using: &random) }
                return "PPS garbled"
            default:
                bytes[avcC.contentStart + 5] = 0xE0 | UInt8([0, 2, 31].randomElement(using: &random)!)
                return "SPS count \(bytes[avcC.contentStart + 5] & 0x1F)"
            }
        default:
            return nil
        }
    }

    /// The first SPS inside `avcC`.
    private static func spsRange(_ bytes: [UInt8], _ boxes: [Box]) -> Range<Int>? {
        guard let avcC = boxes.first(where: { $0.type == "avcC" }), avcC.contentStart + 8 <= avcC.end else {
            return nil
        }
        let length = bytes.be16(avcC.contentStart + 6)
        let start = avcC.contentStart + 8
        guard length > 4, start + length <= avcC.end else { return nil }
        return start..<start + length
    }
}

/// Structure-aware damage to MPEG-TS: packets, the PAT and PMT (CRC recomputed), PES headers and the SPS.
enum TransportStreamDamage {
    static func apply(_ damage: DamagedMedia.Damage, to bytes: inout [UInt8], random: inout SeededGenerator) -> String?
    {
        let packets = bytes.count / 188
        guard packets >= 4 else { return nil }
        switch damage {
        case .swappedBoxes:
            let a = Int.random(in: 0..<min(packets, 16), using: &random)
            var b = Int.random(in: 0..<packets, using: &random)
            if a == b { b = (b + 1) % packets }
            let (first, second) = (min(a, b) * 188, max(a, b) * 188)
            let saved = Array(bytes[first..<first + 188])
            bytes.replaceSubrange(first..<first + 188, with: bytes[second..<second + 188])
            bytes.replaceSubrange(second..<second + 188, with: saved)
            return "packets \(first / 188) and \(second / 188) swapped"
        case .absurdCounts:
            switch Int.random(in: 0..<3, using: &random) {
            case 0:
                // The PMT's section length.
                guard let pmt = section(bytes, pid: pmtPID(bytes)) else { return nil }
                bytes[pmt + 1] = (bytes[pmt + 1] & 0xF0) | 0x0F
                bytes[pmt + 2] = 0xFF
                return "PMT section length 4095"
            case 1:
                // A PES packet length and header length.
                guard let pes = firstPES(bytes) else { return nil }
                bytes.setBE16(pes + 4, AbsurdValues.uint16(&random))
                bytes[pes + 8] = [0, 0xFF, 0xB0].randomElement(using: &random)!
                return "PES lengths \(bytes.be16(pes + 4)), \(bytes[pes + 8])"
            default:
                // An adaptation field that claims the whole packet or more.
                let k = Int.random(in: 0..<packets, using: &random) * 188
                bytes[k + 3] = (bytes[k + 3] & 0xCF) | 0x30
                bytes[k + 4] = [183, 184, 255].randomElement(using: &random)!
                return "adaptation field length \(bytes[k + 4]) in packet \(k / 188)"
            }
        case .absurdDimensions:
            guard let sps = spsInPacket(bytes) else { return nil }
            return replaceSPS(sps, in: &bytes, random: &random)
        case .wrongCodecParameters:
            if Bool.random(using: &random), let pmt = section(bytes, pid: pmtPID(bytes)) {
                // The first elementary stream's type, with the CRC made right again.
                let length = (Int(bytes[pmt + 1] & 0x0F) << 8) | Int(bytes[pmt + 2])
                let infoLength = (Int(bytes[pmt + 10] & 0x0F) << 8) | Int(bytes[pmt + 11])
                let entry = pmt + 12 + infoLength
                guard length >= 13, pmt + 3 + length <= bytes.count, entry < pmt + 3 + length - 4 else { return nil }
                let type = [0x02, 0x0F, 0x24, 0x06, 0x80, 0x00].randomElement(using: &random)!
                bytes[entry] = UInt8(type)
                let crc = mpegCRC32(bytes[pmt..<pmt + 3 + length - 4])
                bytes.setBE32(pmt + 3 + length - 4, crc)
                return "PMT stream type 0x\(String(type, radix: 16))"
            }
            guard let sps = spsInPacket(bytes) else { return nil }
            for i in sps.lowerBound + 1..<sps.upperBound { bytes[i] = UInt8.random(in: 0...255, using: &random) }
            return "SPS garbled"
        default:
            return nil
        }
    }

    /// The PMT's PID, from the PAT's first program.
    private static func pmtPID(_ bytes: [UInt8]) -> Int {
        guard let pat = section(bytes, pid: 0), pat + 12 <= bytes.count else { return 0x1000 }
        return (Int(bytes[pat + 10] & 0x1F) << 8) | Int(bytes[pat + 11])
    }

    /// The offset of the first section (table id) in the first packet of `pid` that starts one.
    private static func section(_ bytes: [UInt8], pid: Int) -> Int? {
        for k in stride(from: 0, to: bytes.count - 187, by: 188) where bytes[k] == 0x47 {
            let packetPID = (Int(bytes[k + 1] & 0x1F) << 8) | Int(bytes[k + 2])
            guard packetPID == pid, bytes[k + 1] & 0x40 != 0 else { continue }
            var payload = k + 4
            if bytes[k + 3] & 0x20 != 0 { payload += 1 + Int(bytes[k + 4]) }
            let table = payload + 1 + Int(bytes[min(payload, bytes.count - 1)])
            return table + 12 < k + 188 ? table : nil
        }
        return nil
    }

    /// The offset of the first video PES header (00 00 01 E0).
    private static func firstPES(_ bytes: [UInt8]) -> Int? {
        for k in stride(from: 0, to: bytes.count - 187, by: 188) where bytes[k + 1] & 0x40 != 0 {
            var payload = k + 4
            if bytes[k + 3] & 0x20 != 0 { payload += 1 + Int(bytes[k + 4]) }
            if payload + 9 < k + 188, bytes[payload..<payload + 4] == [0, 0, 1, 0xE0] { return payload }
        }
        return nil
    }

    /// The first SPS NAL, when it lies inside one packet (it ends at the next start code).
    private static func spsInPacket(_ bytes: [UInt8]) -> Range<Int>? {
        guard let pes = firstPES(bytes) else { return nil }
        let packetEnd = pes - pes % 188 + 188
        var i = pes + 9 + Int(bytes[pes + 8])
        while i + 4 < packetEnd {
            if bytes[i] == 0, bytes[i + 1] == 0, bytes[i + 2] == 1, bytes[i + 3] & 0x1F == 7 {
                var end = i + 4
                while end + 3 <= packetEnd, !(bytes[end] == 0 && bytes[end + 1] == 0 && bytes[end + 2] <= 1) {
                    end += 1
                }
                return end + 3 <= packetEnd ? (i + 3)..<end : nil
            }
            i += 1
        }
        return nil
    }

    /// CRC-32/MPEG-2, as PSI sections carry it.
    static func mpegCRC32(_ bytes: ArraySlice<UInt8>) -> UInt32 {
        var crc: UInt32 = 0xFFFF_FFFF
        for byte in bytes {
            crc ^= UInt32(byte) << 24
            for _ in 0..<8 { crc = crc & 0x8000_0000 != 0 ? (crc << 1) ^ 0x04C1_1DB7 : crc << 1 }
        }
        return crc
    }
}
