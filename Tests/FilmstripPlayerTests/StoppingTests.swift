import FilmstripMedia
import FilmstripSync
import Foundation
import Testing

@testable import FilmstripPlayer

/// A source whose read does not return when cancelled (a decoder stuck in a call that ignores cancellation) until
/// the test lets it go.
private final class StuckSource: FrameSource, @unchecked Sendable {
    let entered = DispatchSemaphore(value: 0)
    let letGo = DispatchSemaphore(value: 0)
    let cancelled = Atomic<Bool>(false)

    func seek(to time: Double) throws {}
    func next() throws -> PlayerFrame? {
        entered.signal()
        letGo.wait()
        return nil
    }
    func interrupt() {}
    func cancel() { cancelled.store(true, ordering: .relaxed) }
    var framesDecoded: Int { 0 }
    var bytesRead: Int { 0 }
    func takeAudio() -> [AudioBuffer] { [] }
    var decodesAudio: Bool { false }
    func restartAudio() {}
    func takeSeparateAudio() -> [AudioBuffer] { [] }
    var hasSeparateAudio: Bool { false }
    func setKeyframesOnly(_ on: Bool) {}
    var audioProblem: MediaError? { nil }
}

@Suite("Stopping: a stop waits for the decoder thread")
struct StoppingTests {
    @Test("a stopped feeder is finished only once its thread has left the decoder; the stop cancels the source")
    func feederFinishes() {
        let source = StuckSource()
        let feeder = FrameFeeder(decoder: source, capacity: 2)
        source.entered.wait()
        feeder.stop()
        let cancelled = source.cancelled.load(ordering: .relaxed)
        #expect(cancelled)
        // The decoder is still inside its read: the release is not over.
        #expect(!feeder.hasFinished)
        source.letGo.signal()
        _ = feeder.stopAndWait()
        #expect(feeder.hasFinished)
    }
}
