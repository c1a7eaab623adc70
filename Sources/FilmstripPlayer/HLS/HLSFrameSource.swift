import FilmstripMedia
import Foundation
import Synchronization

/// Decodes the runs an ``HLSSession`` queues, one ``StreamDecoder`` per run, and places frames on the playlist
/// timeline (run start + time in the run). Used by the ``FrameFeeder`` thread.
final class HLSFrameSource: FrameSource, @unchecked Sendable {
    let session: HLSSession
    private var decoder: StreamDecoder?
    private var run = 0
    private var skipBefore: Double?
    private let decoded = Atomic<Int>(0)
    private var decodedByCurrent = 0

    init(session: HLSSession) {
        self.session = session
    }

    func seek(to time: Double) throws {
        closeDecoder()
        session.seek(to: time)
        skipBefore = time
    }

    func nextFrame() throws -> DecodedVideoFrame? {
        while true {
            if decoder == nil {
                switch session.nextRun() {
                case .end: return nil
                case .interrupted: throw HLSSession.Interrupted()
                case .failed(let error): throw error
                case .run(let id, let start):
                    run = id
                    let session = session
                    let opened = try StreamDecoder(label: session.url) { buffer in
                        try session.read(run: id, into: buffer)
                    }
                    opened.timeOffset = start
                    decoder = opened
                }
            }
            guard let decoder else { continue }
            guard let frame = try decoder.nextFrame() else {
                session.finish(run: run)
                closeDecoder()
                continue
            }
            decoded.add(1, ordering: .relaxed)
            if let skip = skipBefore {
                if frame.time < skip - 1e-6 { continue }
                skipBefore = nil
            }
            return frame
        }
    }

    private func closeDecoder() {
        decoder?.cancel()
        decoder = nil
    }

    func interrupt() { session.interrupt() }

    func cancel() {
        session.stop()
    }

    var framesDecoded: Int { decoded.load(ordering: .relaxed) }
    var bytesRead: Int { session.statistics.bytesLoaded }
}
