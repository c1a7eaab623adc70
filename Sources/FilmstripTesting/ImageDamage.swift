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
