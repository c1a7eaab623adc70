import FilmstripMedia
import FilmstripSync
import Foundation
import Testing

@testable import FilmstripWindow

@Suite("The window's audio ring: what the device holds, between its pulls")
struct WindowAudioTests {
    @Test("latency: the ring plus two periods at a pull, less the time since; 0 once the device is closed")
    func latencyBetweenPulls() throws {
        let format = AudioFormat(sampleRate: 48_000, channels: 2)
        // The ring's clock is the test's: time passes only when the test says.
        let now = Mutex(100.0)
        let ring = AudioRing(trace: nil, clock: { now.withLock { $0 } })
        let audio = WindowAudio(ring: ring, format: format, bufferFrames: 1024)
        let period = 1024.0 / 48_000
        #expect(abs(audio.deviceLatency - 2 * period) < 1e-9)
        // Before the first pull: what is queued, plus the device's two periods.
        audio.queue(AudioBuffer(format: format, time: 0, samples: [Float](repeating: 0.25, count: 4800 * 2)))
        #expect(abs(audio.latency - (0.1 + 2 * period)) < 1e-6)
        // A pull takes one period out of the ring; right after it, the device holds two.
        var device = [Float](repeating: 1, count: 1024 * 2)
        device.withUnsafeMutableBufferPointer { ring.pull(into: $0.baseAddress!, count: $0.count) }
        #expect(device.allSatisfy { $0 == 0.25 })
        let after = audio.latency
        #expect(abs(after - (0.1 - period + 2 * period)) < 1e-9, "\(after)")
        // Time passes and the device plays: the estimate goes down with it, not in steps of a period.
        now.withLock { $0 += 0.01 }
        #expect(abs(audio.latency - (after - 0.01)) < 1e-9, "\(audio.latency) after \(after)")
        // Past the device's two periods without a pull, only the ring is left.
        now.withLock { $0 += 0.1 }
        #expect(abs(audio.latency - (0.1 - period)) < 1e-9)
        // A pull of more than the ring holds is filled with silence, and the ring is empty.
        var long = [Float](repeating: 1, count: 48_000 * 2)
        long.withUnsafeMutableBufferPointer { ring.pull(into: $0.baseAddress!, count: $0.count) }
        let rest = (4800 - 1024) * 2
        #expect(long[..<rest].allSatisfy { $0 == 0.25 } && long[rest...].allSatisfy { $0 == 0 })
        #expect(ring.state()?.queued == 0)
        // Closed: nothing held, nothing kept; the player falls back to the system clock.
        ring.close()
        audio.queue(AudioBuffer.silence(format, time: 1, seconds: 0.1))
        #expect(audio.latency == 0 && ring.state() == nil)
    }
}
