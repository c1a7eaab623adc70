// Also compiled into the libFuzzer binary (Scripts/fuzz.sh): no imports.

/// Structure-aware mutations of the text formats (HLS playlists, MPDs, WebVTT, storyboards): a line duplicated,
/// dropped, swapped or inserted from tags that carry numbers, or a number replaced by a boundary value (2^31, 2^53,
/// 2^63 - 1, 2^64, huge decimals, NaN, exponent forms). The fuzzers use it beside their byte mutations, and the
/// hostile-input CLI suite makes its corpus with it, so both reach the arithmetic behind well-formed tags instead of
/// stopping at the tokenizer.
public enum TextMutation {
    /// Numbers at the edges of the types that sequence numbers, byte ranges, timescales and durations pass through.
    public static let boundaries = [
        "0", "-1", "1", "2147483647", "2147483648", "-2147483649", "4294967295", "4294967296", "9007199254740992",
        "9007199254740993", "9223372036854775807", "9223372036854775808", "-9223372036854775808",
        "18446744073709551616", "99999999999999999999999999999999", "1e308", "1e309", "-1e308", "1e-324", "NaN",
        "inf", "-inf", "0.000001", "123456789.987654321",
    ]

    /// Lines worth inserting: tags that carry numbers, in each text format.
    public static let lines = [
        "#EXT-X-MEDIA-SEQUENCE:9223372036854775807", "#EXT-X-DISCONTINUITY-SEQUENCE:9223372036854775807",
        "#EXT-X-BYTERANGE:9007199254740992@9007199254740992", "#EXT-X-BYTERANGE:100", "#EXTINF:1e308,",
        "#EXT-X-MAP:URI=\"init.mp4\",BYTERANGE=\"9223372036854775807@1\"", "#EXT-X-DISCONTINUITY",
        "#EXT-X-KEY:METHOD=AES-128,URI=\"k\"", "#EXT-X-TILES:RESOLUTION=160x90,LAYOUT=99999x99999,DURATION=1e-9",
        "#EXT-X-TARGETDURATION:-1", "segment.ts", "<S t=\"9223372036854775807\" d=\"1\" r=\"-1\"/>",
        "<SegmentTemplate timescale=\"0\" duration=\"1\" startNumber=\"9223372036854775807\" media=\"$Number$\"/>",
        "<SegmentBase indexRange=\"9223372036854775806-9223372036854775807\"/>",
        "<SegmentURL mediaRange=\"0-18446744073709551616\"/>", "00:00.000 --> 99999999:00:00.000",
        "a.jpg#xywh=0,0,2147483648,2147483648",
    ]

    /// One structural mutation of `text`, chosen by `random`.
    public static func mutate(_ text: [UInt8], using random: inout some RandomNumberGenerator) -> [UInt8] {
        let newline = UInt8(ascii: "\n")
        var lines = text.split(separator: newline, omittingEmptySubsequences: false).map(Array.init)
        let spans = numberSpans(in: text)
        var choice = random.next() % 5
        if choice == 0, spans.isEmpty { choice = 4 }
        switch choice {
        case 0:
            // A number somewhere becomes a boundary value.
            var out = text
            let value = boundaries[Int(random.next() % UInt64(boundaries.count))]
            out.replaceSubrange(spans[Int(random.next() % UInt64(spans.count))], with: Array(value.utf8))
            return out
        case 1 where !lines.isEmpty:
            let k = Int(random.next() % UInt64(lines.count))
            lines.insert(lines[k], at: k)
        case 2 where lines.count > 1:
            lines.remove(at: Int(random.next() % UInt64(lines.count)))
        case 3 where lines.count > 1:
            lines.swapAt(Int(random.next() % UInt64(lines.count)), Int(random.next() % UInt64(lines.count)))
        default:
            let line = Array(Self.lines[Int(random.next() % UInt64(Self.lines.count))].utf8)
            lines.insert(line, at: Int(random.next() % UInt64(lines.count + 1)))
        }
        return Array(lines.joined(separator: [newline]))
    }

    /// The ranges of the digit runs of `text` (with a leading minus sign).
    public static func numberSpans(in text: [UInt8]) -> [Range<Int>] {
        let digits = UInt8(ascii: "0")...UInt8(ascii: "9")
        var spans: [Range<Int>] = []
        var k = 0
        while k < text.count {
            guard digits.contains(text[k]) else {
                k += 1
                continue
            }
            var start = k
            if start > 0, text[start - 1] == UInt8(ascii: "-") { start -= 1 }
            while k < text.count, digits.contains(text[k]) { k += 1 }
            spans.append(start..<k)
        }
        return spans
    }
}
