import FilmstripFormats
import FilmstripImaging
import FilmstripPlayer
import FilmstripTesting
import Foundation
import Synchronization
import Testing

/// CMCD data a request carried, by header or query, as key -> value.
func cmcdKeys(_ request: LoopbackServer.Request) -> [String: String] {
    var text: [String] = []
    for name in ["cmcd-object", "cmcd-request", "cmcd-session", "cmcd-status"] {
        if let value = request.headers[name] { text.append(value) }
    }
    if let query = request.query("CMCD") { text.append(query) }
    var keys: [String: String] = [:]
    for field in text.joined(separator: ",").split(separator: ",") {
        let parts = field.split(separator: "=", maxSplits: 1)
        keys[String(parts[0])] = parts.count > 1 ? String(parts[1]) : "true"
    }
    return keys
}

/// Polls `condition` until it holds or `seconds` pass.
func eventually(_ seconds: Double, _ condition: () -> Bool) async throws -> Bool {
    let deadline = Date().addingTimeInterval(seconds)
    while !condition() {
        if Date() > deadline { return false }
        try await Task.sleep(nanoseconds: 20_000_000)
    }
    return true
}

@Suite("HLS streaming engine", .serialized)
struct StreamingTests {
    @Test("VOD: opening -> ready -> play -> playing -> ended at rate 4; frames cover the stream")
    func vodToEnd() async throws {
        let server = try LoopbackServer()
        let master = try StreamFixtures.serveLadder(on: server)
        let player = Player()
        let recorder = PlayerRecorder()
        recorder.observe(player, frames: false)
        player.playbackRate = 4
        player.open(config: PlayerConfiguration(with: master))
        try await recorder.wait(for: .ended, seconds: 30)
        #expect(withoutStalls(recorder.states) == [.opening, .ready, .play, .playing, .ended], "\(recorder.states)")
        let stats = try #require(player.getStats())
        #expect(abs(stats.duration - 20) < 0.5, "\(stats)")
        #expect(stats.presentedFrames + stats.droppedFrames >= 480, "\(stats)")
        #expect(stats.segmentsLoaded >= 10)
        #expect(recorder.errors.filter { $0.severity != .warning }.isEmpty, "\(recorder.errors)")
    }
}
