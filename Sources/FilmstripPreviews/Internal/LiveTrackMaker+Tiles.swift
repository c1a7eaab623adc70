import FilmstripFormats
import FilmstripImaging
import FilmstripMedia
import FilmstripStreaming
import FilmstripSync
import Foundation

/// A live run's tiles: which frame each shows, from which segment, each segment fetched and opened once.
extension LiveTrackMaker {
    /// The picture for the tile starting at `t` (ms): a keyframe inside the tile (in its segment, or at the start of
    /// the next one in the same discontinuity), else the keyframe before it in its segment (`.auto` and `.accurate`:
    /// the exact frame at its start).
    func tile(at t: Int64, in segments: [SegmentReference], client: StreamingClient) async -> Tile {
        let start = Double(t) / 1000
        let end = Double(t + interval) / 1000
        guard let i = Self.segment(containing: start, in: segments), !segments[i].isGap else { return .missing }
        let reference = segments[i]
        let here: StreamSegment
        switch await open(reference, client: client) {
        case .success(let segment): here = segment
        case .failure(let failure): return failure.tile
        }
        let cue = CuePicture(start: start, end: end)
        var choice: (StreamSegment, OwnedPacket?) = (here, nil)
        looks: for look in CuePicture.looks(configuration.preview.mode) {
            switch look {
            case .keyframeInside:
                if let key = here.keyPacket(inside: cue) {
                    choice = (here, key)
                    break looks
                }
                // The next segment's first keyframe, when it starts inside the cue in the same discontinuity.
                if i + 1 < segments.count, segments[i + 1].start < end - MediaTime.tolerance, !segments[i + 1].isGap,
                    segments[i + 1].discontinuitySequence == reference.discontinuitySequence,
                    case .success(let next) = await open(segments[i + 1], client: client, counting: false),
                    let key = next.firstKeyPacket, cue.contains(next.time(of: key))
                {
                    choice = (next, key)
                    break looks
                }
            case .keyframeBefore:
                // In the cue's own segment only (earlier segments of a live window may be gone); else the exact frame.
                if let key = here.keyPacket(atOrBefore: start) {
                    choice = (here, key)
                    break looks
                }
            case .exactFrame: break looks
            }
        }
        guard let width = state.tileWidth, let height = state.tileHeight else { return .missing }
        let job = Handoff((choice.0, choice.1, converter))
        do {
            let image = try await runBlocking { () throws -> PixelBuffer in
                let (segment, key, converter) = job.value
                let frame: OwnedFrame
                if let key {
                    frame = try segment.decode(key).frame
                } else {
                    guard let exact = try segment.exactFrame(at: start).frame else {
                        throw MediaError(.decodeFailed, "no frame at \(start) s", url: segment.reference.url)
                    }
                    frame = exact
                }
                let turns = segment.input.quarterTurns
                let (w, h) = FrameGeometry.turned(width, height, by: turns)
                return try converter.image(frame.pointer, width: w, height: h, quarterTurns: turns)
            }
            return .picture(image)
        } catch {
            MediaLogging.logger?.warning(
                "a live tile has no picture", metadata: ["time": "\(start)", "error": "\(error)"])
            return .missing
        }
    }

    /// The segment opened (fetched once); a segment that cannot be fetched is waited for over two more reads, then
    /// counted missing; one that does not demux is missing.
    private func open(
        _ reference: SegmentReference, client: StreamingClient, counting: Bool = true
    ) async -> Result<StreamSegment, TileFailure> {
        let key = SegmentKey(number: reference.number, discontinuity: reference.discontinuitySequence)
        if let found = opened.first(where: { $0.key == key }) { return .success(found.segment) }
        let data: Data
        do {
            data = try await StreamFrames.bytes(of: reference, client: client, url: reference.url)
        } catch {
            // A look-ahead's failure is not the segment's: its own tile counts it.
            guard counting else { return .failure(TileFailure(tile: .wait)) }
            failures[key, default: 0] += 1
            if failures.count > 64 { failures = failures.filter { $0.key == key } }
            return .failure(TileFailure(tile: failures[key]! < 3 ? .wait : .missing))
        }
        failures[key] = nil
        let job = Handoff((reference, data, cancellation))
        do {
            let segment = try await runBlocking {
                Handoff(try StreamSegment(reference: job.value.0, bytes: job.value.1, cancellation: job.value.2))
            }.value
            if state.tileWidth == nil {
                let (w, h) = segment.input.displaySize
                state.tileWidth = configuration.preview.width
                state.tileHeight = max(
                    2, Int((Double(configuration.preview.width) * Double(h) / Double(max(1, w)) / 2).rounded()) * 2)
            }
            opened.append((key, segment))
            if opened.count > 3 { opened.removeFirst() }
            return .success(segment)
        } catch {
            return .failure(TileFailure(tile: .missing))
        }
    }

    struct TileFailure: Error {
        var tile: Tile
    }

    private static func segment(containing t: Double, in segments: [SegmentReference]) -> Int? {
        var low = 0
        var high = segments.count - 1
        guard high >= 0, segments[0].start <= t + MediaTime.tolerance else { return nil }
        while low < high {
            let mid = (low + high + 1) / 2
            if segments[mid].start <= t + MediaTime.tolerance { low = mid } else { high = mid - 1 }
        }
        return segments[low].end > t + MediaTime.tolerance ? low : nil
    }
}
