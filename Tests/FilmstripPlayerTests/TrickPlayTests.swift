import Filmstrip
import FilmstripTesting
import Foundation
import Testing

@Suite("Trick play: keyframes only above 2x")
struct TrickPlayTests {
    @Test("at 8x only keyframes are decoded and presented, at their times; back at 1x every frame again")
    func keyframesAtEightTimes() async throws {
        let player = Player()
        let recorder = PlayerRecorder()
        recorder.observe(player)
        player.playbackRate = 8
        // The counter has a keyframe every 2 s (50 frames); frame n shows number n.
        player.open(config: PlayerConfiguration(with: try MediaFixtures.counter()))
        #expect(try await eventually(20) { player.state == .ended }, "\(recorder.states)")
        let stats = try #require(player.getStats())
        #expect(stats.keyframesOnly)
        let shown = recorder.frames.map(\.frame)
        #expect(shown == [0, 50, 100, 150, 200], "\(shown)")
        #expect(stats.decodedFrames == 5 && stats.droppedFrames == 0)
        // Positions moved at the rate: each keyframe at its own time.
        #expect(recorder.frames.map(\.time) == [0, 2, 4, 6, 8])
        // Back to 1x from the start: every frame from the first keyframe on.
        player.playbackRate = 1
        player.seek(0)
        player.play()
        #expect(try await eventually(10) { recorder.frames.count >= 5 + 30 })
        // Frames in between are shown again (a loaded machine may drop a late one).
        let after = recorder.frames.dropFirst(5).prefix(30).compactMap(\.frame)
        #expect(after.first == 0 && after == after.sorted(), "\(after)")
        #expect(after.filter { $0 % 50 != 0 }.count >= 25, "\(after)")
        #expect(player.getStats()?.keyframesOnly == false)
        player.stop()
    }

    @Test("an HLS stream at 8x: keyframes only, the end reached in an eighth of the time")
    func streamAtEightTimes() async throws {
        let server = try LoopbackServer()
        defer { server.stop() }
        let url = try StreamLayouts.serve(.hlsTS, on: server)
        let player = Player()
        let recorder = PlayerRecorder()
        recorder.observe(player)
        player.playbackRate = 8
        player.open(config: PlayerConfiguration(with: url))
        #expect(try await eventually(20) { player.state == .ended }, "\(recorder.states)")
        #expect(recorder.frames.allSatisfy { $0.frame.map { $0 % 50 == 0 } ?? false }, "\(recorder.frames)")
        #expect(recorder.frames.count == 5)
        #expect(player.getStats()?.keyframesOnly == true)
    }
}
