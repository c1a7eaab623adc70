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

/// Structure-aware damage to JPEG: marker segments up to the scan.
enum JPEGDamage {
    /// The marker segments from SOI up to and including SOS (whose entropy-coded data is not walked).
    static func segments(_ bytes: [UInt8]) -> [FilePart] {
        var segments: [FilePart] = []
        var i = 2
        while i + 4 <= bytes.count, bytes[i] == 0xFF {
            let marker = bytes[i + 1]
            let end = i + 2 + bytes.be16(i + 2)
            guard end <= bytes.count else { break }
            segments.append(FilePart(marker: marker, start: i, end: end))
            if marker == 0xDA { break }
            i = end
        }
        return segments
    }

    static func apply(_ damage: DamagedMedia.Damage, to bytes: inout [UInt8], random: inout SeededGenerator) -> String?
    {
        let segments = segments(bytes)
        let sof = segments.first { [0xC0, 0xC1, 0xC2].contains($0.marker) }
        switch damage {
        case .swappedBoxes:
            guard let (a, b) = FilePart.exchangeTwo(of: segments, in: &bytes, random: &random) else { return nil }
            return "segments \(String(a.marker, radix: 16)) and \(String(b.marker, radix: 16)) swapped"
        case .absurdCounts:
            switch Int.random(in: 0..<3, using: &random) {
            case 0:
                guard let sof else { return nil }
                bytes[sof.start + 9] = [0, 2, 4, 255].randomElement(using: &random)!
                return "SOF component count \(bytes[sof.start + 9])"
            case 1:
                guard let dht = segments.filter({ $0.marker == 0xC4 }).randomElement(using: &random),
                    dht.start + 21 <= dht.end
                else { return nil }
                for i in dht.start + 5..<dht.start + 21 { bytes[i] = 0xFF }
                return "DHT counts 255 each"
            default:
                guard let sos = segments.last, sos.marker == 0xDA else { return nil }
                bytes[sos.start + 4] = [0, 4, 255].randomElement(using: &random)!
                return "SOS component count \(bytes[sos.start + 4])"
            }
        case .absurdDimensions:
            guard let sof else { return nil }
            let (w, h) = (AbsurdValues.uint16(&random), AbsurdValues.uint16(&random))
            bytes.setBE16(sof.start + 5, h)
            bytes.setBE16(sof.start + 7, w)
            return "SOF size \(w)x\(h)"
        case .wrongCodecParameters:
            guard let sof else { return nil }
            switch Int.random(in: 0..<4, using: &random) {
            case 0:
                bytes[sof.start + 4] = [0, 12, 16].randomElement(using: &random)!
                return "SOF precision \(bytes[sof.start + 4])"
            case 1:
                bytes[sof.start + 11] = [0x00, 0xFF, 0x41, 0x14].randomElement(using: &random)!
                return "sampling factors 0x\(String(bytes[sof.start + 11], radix: 16))"
            case 2:
                bytes[sof.start + 12] = 3
                return "quantisation table 3 (absent)"
            default:
                bytes[sof.start + 1] = [0xC3, 0xC9, 0xCB, 0xC2].randomElement(using: &random)!
                return "SOF marker 0x\(String(bytes[sof.start + 1], radix: 16))"
            }
        default:
            return nil
        }
    }
}

/// Structure-aware damage to PNG: chunks, with their CRCs recomputed so the damage reaches the decoder.
enum PNGDamage {
    static func chunks(_ bytes: [UInt8]) -> [FilePart] {
        var chunks: [FilePart] = []
        var i = 8
        while i + 12 <= bytes.count {
            let end = i + 12 + Int(bytes.be32(i))
            guard end <= bytes.count else { break }
            chunks.append(FilePart(type: bytes.fourCC(i + 4), start: i, end: end))
            i = end
        }
        return chunks
    }

    private static func resign(_ bytes: inout [UInt8], _ chunk: FilePart) {
        bytes.setBE32(chunk.end - 4, OversizedImageFixture.crc32(bytes[chunk.start + 4..<chunk.end - 4]))
    }

    static func apply(_ damage: DamagedMedia.Damage, to bytes: inout [UInt8], random: inout SeededGenerator) -> String?
    {
        let chunks = chunks(bytes)
        guard let ihdr = chunks.first(where: { $0.type == "IHDR" }), ihdr.end - ihdr.start == 25 else { return nil }
        switch damage {
        case .swappedBoxes:
            guard let (a, b) = FilePart.exchangeTwo(of: chunks, in: &bytes, random: &random) else { return nil }
            return "chunks \(a.type) and \(b.type) swapped"
        case .absurdCounts:
            let chunk = chunks.randomElement(using: &random)!
            let value = AbsurdValues.uint32(&random)
            bytes.setBE32(chunk.start, value)
            return "\(chunk.type) length \(value)"
        case .absurdDimensions:
            let (w, h) = (AbsurdValues.uint32(&random), AbsurdValues.uint32(&random))
            bytes.setBE32(ihdr.start + 8, w)
            bytes.setBE32(ihdr.start + 12, h)
            resign(&bytes, ihdr)
            return "IHDR size \(w)x\(h)"
        case .wrongCodecParameters:
            if Bool.random(using: &random), let idat = chunks.first(where: { $0.type == "IDAT" }),
                idat.end - idat.start > 14
            {
                // The zlib header: another method or window, or a preset dictionary.
                bytes[idat.start + 8] = [0x08, 0x7F, 0xF8, 0x78].randomElement(using: &random)!
                bytes[idat.start + 9] = [0x00, 0x20, 0xFF, 0x9C].randomElement(using: &random)!
                resign(&bytes, idat)
                return
                    "zlib header \(String(bytes[idat.start + 8], radix: 16)) \(String(bytes[idat.start + 9], radix: 16))"
            }
            let field = Int.random(in: 0..<5, using: &random)
            let value: UInt8 = [[0, 3, 7, 32], [1, 5, 7, 9], [1, 255], [1, 9], [2, 255]][field].randomElement(
                using: &random)!
            bytes[ihdr.start + 16 + field] = value
            resign(&bytes, ihdr)
            return ["bit depth", "colour type", "compression", "filter", "interlace"][field] + " \(value)"
        default:
            return nil
        }
    }
}

/// A JPEG marker segment or a PNG chunk: where it lies, and its marker or type.
struct FilePart {
    var marker: UInt8 = 0
    var type = ""
    var start: Int
    var end: Int

    /// Exchanges two of `parts` (chosen at random) in `bytes`; `nil` when there are fewer than two.
    static func exchangeTwo(
        of parts: [FilePart], in bytes: inout [UInt8], random: inout SeededGenerator
    ) -> (
        FilePart, FilePart
    )? {
        guard parts.count >= 2 else { return nil }
        let picked = parts.indices.shuffled(using: &random).prefix(2).sorted()
        let (a, b) = (parts[picked[0]], parts[picked[1]])
        bytes.exchange(a.start..<a.end, b.start..<b.end)
        return (a, b)
    }
}
