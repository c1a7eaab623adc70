public import Foundation

/// The program tables of an MPEG-TS resource: the PAT (PID 0) and the PMTs it names, which a demuxer must see before
/// the elementary streams make sense.
///
/// An HLS byte range, an I-frame playlist's entries above all, may start after its resource's PAT and PMT without
/// an `EXT-X-MAP` (RFC 8216 only says SHOULD; Shaka Packager writes I-frame ranges that way). A reader then takes
/// the tables from the resource's head, as `StreamingClient.programTables(for:media:)` does. Every scan is bounded
/// by the bytes given and steps whole 188-byte packets.
public enum TransportStreamTables {
    /// The size of a transport stream packet.
    public static let packetSize = 188

    /// Whether `data` is MPEG-TS: sync bytes at the start of its first packets.
    public static func isTransportStream(_ data: Data) -> Bool {
        guard data.count >= packetSize else { return false }
        let base = data.startIndex
        let packets = min(3, data.count / packetSize)
        return (0..<packets).allSatisfy { data[base + $0 * packetSize] == 0x47 }
    }

    /// Whether a PAT comes before the first packet of any other PID that starts a payload unit (the first PES).
    public static func beginsWithTables(_ data: Data) -> Bool {
        var sawPAT = false
        for packet in packets(of: data) {
            if packet.pid == 0 { sawPAT = true }
            if packet.startsUnit, packet.pid != 0 {
                // A PMT (a section, not a PES) may follow the PAT; a PES start before any PAT means no tables.
                if !sawPAT && isPES(data, packet) { return false }
                if sawPAT && isPES(data, packet) { return true }
            }
        }
        return sawPAT
    }

    /// The PAT packet and the packets of the PMTs it names, in the order they appear in `data`; nil when `data`
    /// holds no PAT, or no packet of a PMT the PAT names.
    public static func tables(in data: Data) -> Data? {
        var pat: Range<Int>?
        var pmtPIDs: Set<Int> = []
        for packet in packets(of: data) where packet.pid == 0 && packet.startsUnit {
            pat = packet.range
            pmtPIDs = programMapPIDs(data[packet.range])
            break
        }
        guard let pat, !pmtPIDs.isEmpty else { return nil }
        var out = Data(data[pat])
        var found: Set<Int> = []
        for packet in packets(of: data) where pmtPIDs.contains(packet.pid) && !found.contains(packet.pid) {
            guard packet.startsUnit else { continue }
            out += data[packet.range]
            found.insert(packet.pid)
            if found == pmtPIDs { break }
        }
        return found.isEmpty ? nil : out
    }

    // MARK: Packets

    /// How many bytes into `data` the first video PES starts whose presentation time is more than `seconds` after the first
    /// video PES's (the PID of the first PES with a video stream id, 0xE0 to 0xEF, and a PTS; 33-bit wrap taken
    /// into account); `nil` when `data` has none. Every frame before that offset is whole: the bytes a keyframe at
    /// or before a time needs when the offset is past that time by more than the reordering delay.
    public static func videoStart(after seconds: Double, in data: Data) -> Int? {
        var video: (pid: Int, first: Int64)?
        for packet in packets(of: data) where packet.startsUnit {
            if let video, packet.pid != video.pid { continue }
            guard let pts = videoPTS(data, packet) else { continue }
            guard let found = video else {
                video = (packet.pid, pts)
                continue
            }
            let delta = (pts - found.first) & 0x1_FFFF_FFFF
            // A PTS behind the first (a reordered frame) wraps to near 2^33: not "after".
            if delta < 0x1_0000_0000, Double(delta) / 90_000 > seconds {
                return packet.range.lowerBound - data.startIndex
            }
        }
        return nil
    }

    /// The PTS of the video PES `packet` starts (stream id 0xE0 to 0xEF, with a PTS), in 90 kHz units.
    private static func videoPTS(_ data: Data, _ packet: Packet) -> Int64? {
        guard isPES(data, packet), let at = packet.payload, at + 14 <= packet.range.upperBound,
            (0xE0...0xEF).contains(data[at + 3]), data[at + 7] & 0x80 != 0
        else { return nil }
        let b = (0..<5).map { Int64(data[at + 9 + $0]) }
        return (b[0] >> 1 & 0x7) << 30 | b[1] << 22 | (b[2] >> 1) << 15 | b[3] << 7 | b[4] >> 1
    }

    private struct Packet {
        var range: Range<Int>
        var pid: Int
        var startsUnit: Bool
        /// Where the payload starts (after the header and any adaptation field), when the packet has one.
        var payload: Int?
    }

    /// The whole packets of `data`, stopping at the first that has no sync byte.
    private static func packets(of data: Data) -> some Sequence<Packet> {
        let base = data.startIndex
        let count = data.count / packetSize
        return (0..<count).lazy.map { k -> Packet? in
            let start = base + k * packetSize
            guard data[start] == 0x47 else { return nil }
            let pid = Int(data[start + 1] & 0x1F) << 8 | Int(data[start + 2])
            let control = (data[start + 3] >> 4) & 0x3
            var payload: Int? = start + 4
            if control == 2 {
                payload = nil
            } else if control == 3 {
                let after = start + 5 + Int(data[start + 4])
                payload = after < start + packetSize ? after : nil
            }
            return Packet(
                range: start..<(start + packetSize), pid: pid, startsUnit: data[start + 1] & 0x40 != 0,
                payload: payload)
        }.prefix { $0 != nil }.map { $0! }
    }

    /// Whether the payload unit `packet` starts is a PES (start code 00 00 01), not a PSI section.
    private static func isPES(_ data: Data, _ packet: Packet) -> Bool {
        guard let at = packet.payload, at + 3 <= packet.range.upperBound else { return false }
        return data[at] == 0 && data[at + 1] == 0 && data[at + 2] == 1
    }

    /// The PMT PIDs of the programs a PAT packet lists (program number 0, the network PID, excluded).
    private static func programMapPIDs(_ packet: Data) -> Set<Int> {
        let base = packet.startIndex
        guard packet.count == packetSize else { return [] }
        let control = (packet[base + 3] >> 4) & 0x3
        var at = base + 4
        if control == 3 { at += 1 + Int(packet[base + 4]) }
        guard control & 1 == 1, at < packet.endIndex else { return [] }
        at += 1 + Int(packet[at])  // pointer field
        guard at + 8 <= packet.endIndex, packet[at] == 0x00 else { return [] }
        let sectionLength = Int(packet[at + 1] & 0x0F) << 8 | Int(packet[at + 2])
        // The program loop runs from after the 8-byte header to before the CRC, within this packet.
        let loopEnd = min(at + 3 + sectionLength - 4, packet.endIndex)
        var entry = at + 8
        var pids: Set<Int> = []
        while entry + 4 <= loopEnd {
            let program = Int(packet[entry]) << 8 | Int(packet[entry + 1])
            let pid = Int(packet[entry + 2] & 0x1F) << 8 | Int(packet[entry + 3])
            // PID 0 is the PAT itself and 0x1FFF the null packets: neither is a PMT.
            if program != 0, pid != 0, pid != 0x1FFF { pids.insert(pid) }
            entry += 4
        }
        return pids
    }
}
