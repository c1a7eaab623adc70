import Foundation

#if !FILMSTRIP_FUZZ
    @testable import FilmstripFormats
#endif

/// The starting corpus of each target: the repository's fixture files, every multi-line string literal of the test
/// sources that is a track, playlist, MPD or storyboard, and what Filmstrip's own writers produce.
extension FuzzTarget {
    /// The repository this file belongs to.
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent()

    var seeds: [Data] {
        let text: [String]
        switch self {
        case .webvtt: text = Self.fixtures(kind: "webvtt") + [PreviewTrackWriter.webVTT(Self.layout)]
        case .hls:
            text =
                Self.fixtures(kind: "hls") + [
                    PreviewTrackWriter.hlsImagePlaylist(Self.layout),
                    "#EXTM3U\n"
                        + PreviewTrackWriter.imageStreamInf(Self.layout, uri: "images.m3u8", sheetBytes: [9, 9]),
                ]
        case .mpd:
            text =
                Self.fixtures(kind: "mpd") + [
                    PreviewTrackWriter.dashMPD(Self.layout, mediaTemplate: "tile_$Number$.jpg", sheetBytes: [9, 9])
                ]
        case .storyboard:
            text =
                Self.fixtures(kind: "storyboard") + [
                    PreviewTrackWriter.jsonObjects(Self.layout),
                    PreviewTrackWriter.storyboard(
                        url: "s.jpg", tileWidth: 160, tileHeight: 90, duration: 10,
                        tiles: [(0, 0, 0), (5000, 160, 0)]),
                ]
        case .fragment:
            text = [
                "xywh=160,0,160,90", "xywh=pixel:0,90,160,90", "xywh=percent:25,25,50,50", "t=10&xywh=1,2,3,4",
                "0,0,160,90", "t=10",
            ]
        case .grid:
            text = [
                "thumbs/$index$.jpg|5|5|2000|7|1|12.5", "https://cdn.example.com/t/$index$_7.jpg|10|10|1000|0|0|99",
            ]
        case .cmcd:
            text = [
                #"bl=21300,br=3200,bs,cid="faec5fc2-ac30-11ea-bb37-0242ac130002",d=4004,dl=18500,mtp=48100,"#
                    + #"nor="..%2F300kbps%2Ftrack.m4v",nrr="12323-48763",ot=v,pr=1.08,rtp=12000,sf=d,"#
                    + #"sid="6e2fb550-c457-11e9-bb97-0800200c9a66",st=v,su,tb=6000,v=2,com.example-a=?1"#,
                #"sid="a\"b\\c",x-n=-1.5,x-t=token:1/2"#,
            ]
        case .cmcdRoundTrip:
            return (0..<8).map { k in Data((0..<96).map { UInt8(truncatingIfNeeded: $0 &* (k + 3) &+ k) }) }
        case .bif:
            return [
                Data(
                    PreviewTrackWriter.bif(
                        images: [[0xFF, 0xD8, 0xFF, 0xD9], [0xFF, 0xD8, 0xFF, 0xD9]], starts: [0, 5000]))
            ]
        case .sidx: return [Self.segmentIndex(version: 0), Self.segmentIndex(version: 1)]
        case .iFrameImages:
            let jpeg = Data([0xFF, 0xD8, 0xFF, 0xD9])
            let sequence = ImageIFrameSequence(
                images: [.init(start: 0, duration: 2000, jpeg: jpeg), .init(start: 2000, duration: 2000, jpeg: jpeg)],
                width: 32, height: 18)
            return [sequence.file.prefix(sequence.initializationLength)]
                + sequence.fragments.map { Data(sequence.file[$0]) }
        case .transportStream: return [Self.transportStream(adaptation: false), Self.transportStream(adaptation: true)]
        case .codecString:
            return [
                Data([0x01, 0x64, 0x00, 0x1F, 0xFF, 0xE1]),
                Data([0x01, 0x01, 0x60, 0, 0, 0, 0x90, 0, 0, 0, 0, 0, 0x5D, 0xF0]),
                Data([0, 0, 0, 1, 0x67, 0x64, 0, 0x28, 0xAC, 0, 0, 1, 0x68, 0xEE]),
                Data([0, 0, 1, 0x42, 0x01, 0x01, 0x22, 0x20, 0, 0, 3, 0, 0, 3, 0, 0, 3, 0, 0, 3, 0, 0x99, 0xA0]),
                Data([0x81, 0x04, 0x0C, 0x00]),
            ]
        }
        return text.map { Data($0.utf8) }
    }

    private static let layout = PreviewTrackLayout(
        duration: 20, starts: [0, 5000, 10000, 15000], ends: [5000, 10000, 15000, 20000], tileWidth: 160,
        tileHeight: 90, columns: 2, rows: 1, sheetNames: ["sheet-1.jpg", "sheet-2.jpg"], sheetRows: [1, 1])

    /// A `styp` box and a `sidx` of three subsegments.
    private static func segmentIndex(version: UInt8) -> Data {
        func be(_ value: UInt64, _ bytes: Int) -> [UInt8] {
            (0..<bytes).reversed().map { UInt8(truncatingIfNeeded: value >> (8 * $0)) }
        }
        let styp: [UInt8] = be(16, 4) + Array("stypmsdh".utf8) + be(0, 4)
        var body: [UInt8] = [version, 0, 0, 0] + be(1, 4) + be(90_000, 4)
        body += version == 0 ? be(0, 4) + be(0, 4) : be(0, 8) + be(0, 8)
        body += be(0, 2) + be(3, 2)
        for k in 0..<3 { body += be(UInt64(1000 + k), 4) + be(180_000, 4) + be(0x9000_0000, 4) }
        return Data(styp + be(UInt64(8 + body.count), 4) + Array("sidx".utf8) + body)
    }

    /// A PAT, its PMT (video on PID 0x100) and video PES starts half a second apart, some in decode order behind
    /// their predecessor (B frames), each followed by a continuation packet; with `adaptation`, each start carries
    /// an adaptation field.
    private static func transportStream(adaptation: Bool) -> Data {
        func packet(pid: Int, start: Bool, _ payload: [UInt8]) -> [UInt8] {
            var header: [UInt8] = [0x47, UInt8(pid >> 8) | (start ? 0x40 : 0), UInt8(pid & 0xFF)]
            var body = payload
            if adaptation, start {
                header.append(0x30)
                body = [UInt8(7), 0x00] + [UInt8](repeating: 0xFF, count: 6) + body
            } else {
                header.append(0x10)
            }
            return Array((header + body + [UInt8](repeating: 0xFF, count: 188)).prefix(188))
        }
        func pts(_ value: Int64) -> [UInt8] {
            [
                0x21 | UInt8(value >> 29 & 0x0E), UInt8(value >> 22 & 0xFF), UInt8(value >> 14 & 0xFE) | 1,
                UInt8(value >> 7 & 0xFF), UInt8(value << 1 & 0xFE) | 1,
            ]
        }
        let pat: [UInt8] = [0, 0x00, 0xB0, 0x0D, 0, 1, 0xC1, 0, 0, 0, 1, 0xF0, 0x00, 0, 0, 0, 0]
        let pmt: [UInt8] = [
            0, 0x02, 0xB0, 0x12, 0, 1, 0xC1, 0, 0, 0xE1, 0x00, 0xF0, 0, 0x1B, 0xE1, 0x00, 0xF0, 0, 0, 0, 0, 0,
        ]
        var bytes = packet(pid: 0, start: true, pat) + packet(pid: 0x1000, start: true, pmt)
        for (k, time) in [0, 2, 1, 3, 5, 4, 6, 8, 7].enumerated() {
            let pes: [UInt8] = [0, 0, 1, 0xE0, 0, 0, 0x80, 0x80, 5] + pts(Int64(time) * 45_000 + 900_000)
            bytes += packet(pid: 0x100, start: true, pes + [0, 0, 0, 1, 0x09, UInt8(k)])
            bytes += packet(pid: 0x100, start: false, [UInt8](repeating: UInt8(k), count: 184))
        }
        return Data(bytes)
    }

    /// Fixture files and the multi-line literals of the test sources, by kind.
    private static func fixtures(kind: String) -> [String] {
        var found: [String] = []
        let files = FileManager.default.enumerator(
            at: root.appendingPathComponent("Tests"), includingPropertiesForKeys: nil)
        while let url = files?.nextObject() as? URL {
            guard let text = try? String(contentsOf: url, encoding: .utf8) else { continue }
            switch url.pathExtension {
            case "swift": found += literals(in: text)
            case "json" where url.lastPathComponent == "cases.json":
                let cases = (try? JSONSerialization.jsonObject(with: Data(text.utf8))) as? [[String: Any]] ?? []
                found += cases.compactMap { $0["vtt"] as? String }
            case "m3u8", "mpd", "vtt": found.append(text)
            default: break
            }
        }
        return found.filter { classify($0) == kind }
    }

    private static func classify(_ text: String) -> String? {
        let head = text.drop { $0.isWhitespace }
        if head.hasPrefix("WEBVTT") { return "webvtt" }
        if head.hasPrefix("#EXTM3U") { return "hls" }
        if head.prefix(400).contains("<MPD") { return "mpd" }
        if head.hasPrefix("[") || head.hasPrefix("{") { return "storyboard" }
        return nil
    }

    /// The contents of `"""` literals, with the closing delimiter's indentation removed.
    private static func literals(in source: String) -> [String] {
        var out: [String] = []
        var current: [Substring]?
        for line in source.split(separator: "\n", omittingEmptySubsequences: false) {
            let trimmed = line.drop { $0 == " " }
            if current == nil, line.hasSuffix("\"\"\"") && !trimmed.hasPrefix("\"\"\"") {
                current = []
            } else if let lines = current, trimmed.hasPrefix("\"\"\"") {
                let indent = line.count - trimmed.count
                out.append(
                    lines.map { String($0.dropFirst(min(indent, $0.prefix { $0 == " " }.count))) }.joined(
                        separator: "\n") + "\n")
                current = nil
            } else if current != nil {
                current?.append(line)
            }
        }
        return out
    }
}
