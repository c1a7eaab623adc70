/// Writes an animated GIF (GIF89a) a frame at a time: one palette of 256 colours chosen by median cut from all the
/// frames (so colours do not flicker from frame to frame), each frame LZW-coded whole, played in a loop. A frame is
/// kept as 15-bit colours (2 bytes a pixel, all the palette mapping reads) until ``finish()``.
///
/// ```swift
/// var gif = try GIFEncoder(width: 320, height: 180, frameCount: 50)
/// for frame in frames { try gif.add(frame, delay: 10) }  // hundredths of a second
/// let bytes = gif.finish()
/// ```
public struct GIFEncoder: Sendable {
    /// The largest side a GIF can have.
    public static let maximumDimension = 65535

    public let width: Int
    public let height: Int
    private let sampleStep: Int
    private var frames: [(colors: [UInt16], delay: Int)] = []
    private var samples: [UInt32] = []

    /// An animation of `width` by `height` pixels, of about `frameCount` frames (it spreads the palette's sample).
    public init(width: Int, height: Int, frameCount: Int) throws(ImagingError) {
        guard (1...Self.maximumDimension).contains(width), (1...Self.maximumDimension).contains(height) else {
            throw ImagingError(
                .invalidGeometry, "a GIF is 1 to \(Self.maximumDimension) pixels a side (got \(width)x\(height))")
        }
        self.width = width
        self.height = height
        // About 100,000 pixels sampled in all.
        sampleStep = max(1, width * height * max(1, frameCount) / 100_000)
    }

    /// Adds a frame of the animation's size, shown for `delay` hundredths of a second.
    public mutating func add(_ frame: PixelBuffer, delay: Int) throws(ImagingError) {
        guard frame.width == width, frame.height == height else {
            throw ImagingError(
                .invalidGeometry, "a frame of \(frame.width)x\(frame.height) in a \(width)x\(height) animation")
        }
        let c = frame.layout.channels
        var colors = [UInt16](repeating: 0, count: width * height)
        frame.bytes.withUnsafeBufferPointer { p in
            for i in 0..<colors.count {
                let (r, g, b) = (p[i * c], p[i * c + 1], p[i * c + 2])
                colors[i] = UInt16(r >> 3) << 10 | UInt16(g >> 3) << 5 | UInt16(b >> 3)
                if i % sampleStep == 0 { samples.append(UInt32(r) << 16 | UInt32(g) << 8 | UInt32(b)) }
            }
        }
        frames.append((colors, min(0xFFFF, max(0, delay))))
    }

    /// The GIF's bytes.
    public consuming func finish() -> [UInt8] {
        var palette = Palette(samples)
        var out: [UInt8] = Array("GIF89a".utf8)
        out.append(littleEndian: width)
        out.append(littleEndian: height)
        // A global colour table of 2^(7+1) entries, 8 bits a channel; background 0; square pixels.
        out += [0xF7, 0, 0]
        out += palette.table
        // Loop for ever (the NETSCAPE2.0 application extension every browser reads).
        out += [0x21, 0xFF, 0x0B] + Array("NETSCAPE2.0".utf8) + [0x03, 0x01, 0x00, 0x00, 0x00]
        var indices = [UInt8](repeating: 0, count: width * height)
        for (colors, delay) in frames {
            // Graphic control: the frame stays while the next is drawn over it whole; its delay; no transparency.
            out += [0x21, 0xF9, 0x04, 0x04]
            out.append(littleEndian: delay)
            out += [0x00, 0x00]
            // The image: the whole canvas, no local colour table, not interlaced.
            out += [0x2C, 0, 0, 0, 0]
            out.append(littleEndian: width)
            out.append(littleEndian: height)
            out.append(0)
            for i in 0..<colors.count { indices[i] = palette.index(of: colors[i]) }
            LZW.encode(indices, into: &out)
        }
        out.append(0x3B)
        return out
    }

    /// Hundredths of a second for each of `count` frames `seconds` apart, rounded so the total stays right
    /// (30 a second: 3, 4, 3, 3, 4, 3, …).
    public static func delays(count: Int, every seconds: Double) -> [Int] {
        (0..<count).map { i in
            Int((Double(i + 1) * seconds * 100).rounded()) - Int((Double(i) * seconds * 100).rounded())
        }
    }
}

/// The palette of an animation and the mapping of colours to it.
private struct Palette {
    /// 256 colours, 3 bytes each.
    private(set) var table: [UInt8]
    /// The nearest entry for each colour of 5 bits a channel; 0xFFFF until first asked.
    private var nearest: [UInt16]

    /// Median cut over a sample of the animation's colours.
    init(_ samples: [UInt32]) {
        var colors = samples.isEmpty ? [0] : samples
        var boxes: [Range<Int>] = [0..<colors.count]
        var spreads = [Self.widest(colors[...])]
        while boxes.count < 256 {
            // Split the box whose widest channel spans the most, weighted by its pixels, at its median.
            var best: (index: Int, score: Int)?
            for (b, box) in boxes.enumerated() where box.count > 1 && spreads[b].1 > 0 {
                let score = spreads[b].1 * box.count
                if score > (best?.score ?? 0) { best = (b, score) }
            }
            guard let best else { break }
            let box = boxes[best.index]
            let shift = UInt32(16 - 8 * spreads[best.index].0)
            colors[box].sort { ($0 >> shift) & 0xFF < ($1 >> shift) & 0xFF }
            let middle = box.lowerBound + box.count / 2
            boxes[best.index] = box.lowerBound..<middle
            spreads[best.index] = Self.widest(colors[box.lowerBound..<middle])
            boxes.append(middle..<box.upperBound)
            spreads.append(Self.widest(colors[middle..<box.upperBound]))
        }
        table = [UInt8](repeating: 0, count: 768)
        for (b, box) in boxes.enumerated() where !box.isEmpty {
            var sums = (0, 0, 0)
            for color in colors[box] {
                sums.0 += Int(color >> 16 & 0xFF)
                sums.1 += Int(color >> 8 & 0xFF)
                sums.2 += Int(color & 0xFF)
            }
            table[3 * b] = UInt8(sums.0 / box.count)
            table[3 * b + 1] = UInt8(sums.1 / box.count)
            table[3 * b + 2] = UInt8(sums.2 / box.count)
        }
        nearest = [UInt16](repeating: 0xFFFF, count: 1 << 15)
    }

    /// The channel (0 red, 1 green, 2 blue) whose values spread widest, and the spread.
    private static func widest(_ colors: ArraySlice<UInt32>) -> (Int, Int) {
        var low = (255, 255, 255)
        var high = (0, 0, 0)
        for color in colors {
            let (r, g, b) = (Int(color >> 16 & 0xFF), Int(color >> 8 & 0xFF), Int(color & 0xFF))
            low = (min(low.0, r), min(low.1, g), min(low.2, b))
            high = (max(high.0, r), max(high.1, g), max(high.2, b))
        }
        let spans = [high.0 - low.0, high.1 - low.1, high.2 - low.2]
        let channel = spans.indices.max { spans[$0] < spans[$1] }!
        return (channel, spans[channel])
    }

    /// The palette index of a 15-bit colour (5 bits a channel).
    mutating func index(of color: UInt16) -> UInt8 {
        var entry = nearest[Int(color)]
        if entry == 0xFFFF {
            let (r, g, b) = (Int(color >> 10 & 31) << 3 | 4, Int(color >> 5 & 31) << 3 | 4, Int(color & 31) << 3 | 4)
            entry = closest(r: r, g: g, b: b)
            nearest[Int(color)] = entry
        }
        return UInt8(entry)
    }

    private func closest(r: Int, g: Int, b: Int) -> UInt16 {
        var best = (index: 0, distance: Int.max)
        for e in 0..<256 {
            let dr = Int(table[3 * e]) - r
            let dg = Int(table[3 * e + 1]) - g
            let db = Int(table[3 * e + 2]) - b
            // Weighted as the eye weighs the channels (about 2:4:1 for green over red over blue, roughly 3:4:2).
            let distance = 3 * dr * dr + 4 * dg * dg + 2 * db * db
            if distance < best.distance { best = (e, distance) }
        }
        return UInt16(best.index)
    }
}

/// GIF's variable-width LZW (8-bit symbols, codes of 9 to 12 bits, a clear code when the table is full), packed
/// least significant bit first into sub-blocks of at most 255 bytes.
private enum LZW {
    static func encode(_ symbols: [UInt8], into out: inout [UInt8]) {
        let clear = 256
        let end = 257
        out.append(8)  // the minimum code size
        var bits = BitPacker()
        // An open-addressed table from (prefix code, next symbol) to code: cheap to empty at each clear code.
        let slots = 8191
        var keys = [Int32](repeating: -1, count: slots)
        var codes = [UInt16](repeating: 0, count: slots)
        var width = 9
        var last = end  // the last code given out
        bits.write(clear, width: width)
        var prefix = Int(symbols[0])
        for symbol in symbols.dropFirst() {
            let key = Int32(prefix << 8 | Int(symbol))
            var slot = Int(key) % slots
            while keys[slot] != -1, keys[slot] != key { slot = slot == 0 ? slots - 1 : slot - 1 }
            if keys[slot] == key {
                prefix = Int(codes[slot])
                continue
            }
            bits.write(prefix, width: width)
            last += 1
            keys[slot] = key
            codes[slot] = UInt16(last)
            if last >= 1 << width, width < 12 { width += 1 }
            if last == 4095 {
                bits.write(clear, width: width)
                for i in 0..<slots { keys[i] = -1 }
                width = 9
                last = end
            }
            prefix = Int(symbol)
        }
        bits.write(prefix, width: width)
        bits.write(end, width: width)
        bits.flush()
        var start = 0
        while start < bits.bytes.count {
            let count = min(255, bits.bytes.count - start)
            out.append(UInt8(count))
            out += bits.bytes[start..<start + count]
            start += count
        }
        out.append(0)
    }

    private struct BitPacker {
        var bytes: [UInt8] = []
        private var buffer = 0
        private var count = 0

        mutating func write(_ code: Int, width: Int) {
            buffer |= code << count
            count += width
            while count >= 8 {
                bytes.append(UInt8(buffer & 0xFF))
                buffer >>= 8
                count -= 8
            }
        }

        mutating func flush() {
            if count > 0 { bytes.append(UInt8(buffer & 0xFF)) }
            buffer = 0
            count = 0
        }
    }
}

extension [UInt8] {
    fileprivate mutating func append(littleEndian value: Int) {
        append(UInt8(value & 0xFF))
        append(UInt8(value >> 8 & 0xFF))
    }
}
