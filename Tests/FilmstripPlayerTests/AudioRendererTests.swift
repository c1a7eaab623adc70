import FilmstripMedia
import FilmstripSync
import Foundation
import Testing

@testable import FilmstripPlayer

/// Collects what a renderer hands over.
private final class CollectingOutput: AudioOutput, @unchecked Sendable {
    let format = AudioFormat(sampleRate: 1000, channels: 1)
    var buffers: [AudioBuffer] = []
    func play(_ buffer: AudioBuffer) { buffers.append(buffer) }
    var seconds: Double { buffers.reduce(0) { $0 + $1.duration } }
}

private func tone(_ format: AudioFormat, from start: Double, seconds: Double, value: Float = 0.5) -> AudioBuffer {
    AudioBuffer(
        format: format, time: start,
        samples: [Float](repeating: value, count: Int(seconds * Double(format.sampleRate)) * format.channels))
}

@Suite("Audio renderer (a value: what is handed over when)")
struct AudioRendererTests {
    @Test("PCM is cut at the clock; the rest waits; holes become silence; a late start trims")
    func cutsAtTheClock() {
        let output = CollectingOutput()
        var renderer = AudioRenderer(output: output)
        var queue = [tone(output.format, from: 0, seconds: 0.5), tone(output.format, from: 0.6, seconds: 1)]
        func take(_ before: Double) -> [AudioBuffer] {
            let due = queue.filter { $0.time < before }
            queue.removeAll { $0.time < before }
            return due
        }
        // Playback starts at 0.1: the first 0.1 s of the queue is skipped.
        renderer.render(until: 0.3, start: 0.1, rate: 1, muted: false, take: take)
        func times() -> [Double] { output.buffers.map { ($0.time * 1000).rounded() / 1000 } }
        #expect(times() == [0.1] && abs(output.seconds - 0.2) < 1e-9)
        // Up to 0.8: the rest of the first buffer, 0.1 s of silence for the hole, then the second buffer up to 0.8.
        renderer.render(until: 0.8, start: 0, rate: 1, muted: false, take: take)
        #expect(times() == [0.1, 0.3, 0.5, 0.6])
        #expect(output.buffers[2].isSilent && !output.buffers[3].isSilent)
        #expect(abs(output.seconds - 0.7) < 1e-9 && renderer.cursor == 0.8)
        // Muted: silence as long as the time, the PCM it covers dropped; counted.
        renderer.render(until: 1.0, start: 0, rate: 1, muted: true, take: take)
        #expect(output.buffers.last?.isSilent == true && abs(renderer.silence - 0.2) < 1e-9)
        renderer.render(until: 1.2, start: 0, rate: 1, muted: false, take: take)
        #expect(times().last == 1.0 && output.buffers.last?.isSilent == false)
    }

    @Test("rate 4: silence a quarter as long as the media time; rate 2: the tempo filter halves the length")
    func rates() {
        let output = CollectingOutput()
        var renderer = AudioRenderer(output: output)
        var queue = [tone(output.format, from: 0, seconds: 4)]
        renderer.render(until: 2, start: 0, rate: 4, muted: false) { _ in
            defer { queue = [] }; return queue
        }
        #expect(abs(output.seconds - 0.5) < 0.002 && abs(renderer.silence - 0.5) < 0.002)
        let fast = CollectingOutput()
        var tempo = AudioRenderer(output: fast)
        var more = [tone(fast.format, from: 0, seconds: 4)]
        tempo.render(until: 4, start: 0, rate: 2, muted: false) { _ in
            defer { more = [] }; return more
        }
        tempo.finish(at: 4, rate: 2, muted: false) { _ in [] }
        #expect(abs(fast.seconds - 2) < 0.05 && tempo.silence == 0, "\(fast.seconds)")
    }

    @Test("through a tempo filter, half of what the filter holds counts as not yet heard")
    func heardThroughTheTempoFilter() {
        let output = CollectingOutput()
        var renderer = AudioRenderer(output: output)
        var queue = [tone(output.format, from: 0, seconds: 2)]
        var held: [Double] = []
        for step in 1...10 {
            renderer.render(until: Double(step) * 0.1, start: 0, rate: 0.5, muted: false) { _ in
                defer { queue = [] }; return queue
            }
            // Fed up to the cursor; given out: `seconds` of sound, each second half a second of media.
            let cursor = Double(step) * 0.1
            let hold = max(0, cursor - output.seconds * 0.5)
            held.append(hold)
            let heard = renderer.heard(rate: 0.5) ?? -1
            #expect(abs(heard - (cursor - hold / 2)) < 1e-9, "step \(step): heard \(heard), held \(hold)")
            #expect(abs(renderer.heldInTempo - hold) < 1e-9)
        }
        #expect(held.last! > 0.005, "the filter holds some: \(held)")
        // At rate 1 there is no filter: what was handed over is what is heard.
        let plain = CollectingOutput()
        var direct = AudioRenderer(output: plain)
        var more = [tone(plain.format, from: 0, seconds: 1)]
        direct.render(until: 0.5, start: 0, rate: 1, muted: false) { _ in
            defer { more = [] }; return more
        }
        #expect(direct.heard(rate: 1) == 0.5 && direct.heldInTempo == 0)
    }
}
