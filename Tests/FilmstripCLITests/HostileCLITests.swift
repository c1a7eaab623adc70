import FilmstripTesting
import Foundation
import Testing

@Suite("CLI: --deny-private-addresses")
struct HostileCLITests {
    @Test("every fetching command refuses a loopback server under the flag (exit 2; play exits 1) and sends nothing")
    func denyPrivateAddresses() async throws {
        let server = try LoopbackServer()
        server.serve("/t.vtt", text: "WEBVTT\n\n00:00.000 --> 00:05.000\na.jpg#xywh=0,0,16,9\n")
        let track = server.url("/t.vtt").absoluteString
        let commands: [[String]] = [
            ["thumbnail", track, "--at", "1"], ["inspect", track],
            ["frame", server.url("/v.mp4").absoluteString, "--at", "1"],
            ["generate", server.url("/v.mp4").absoluteString, "-o", NSTemporaryDirectory() + "deny-\(UUID())"],
            ["gallery", server.url("/v.mp4").absoluteString, "-o", NSTemporaryDirectory() + "deny-\(UUID())"],
            ["thumbnail", "--engine", "frames", server.url("/v.mp4").absoluteString, "--at", "1"],
        ]
        for command in commands {
            let result = try await filmstripArguments(command + ["--deny-private-addresses"])
            #expect(result.status == 2, "\(command): \(result.stderr)")
            #expect(result.stderr.contains("address policy"), "\(command): \(result.stderr)")
        }
        // play reports the refusal as its fatal error (exit 1, the message on standard error).
        for source in [server.url("/v.mp4"), server.url("/master.m3u8")] {
            let played = try await filmstrip(
                "play", source.absoluteString, "--autoplay", "--duration", "5", "--deny-private-addresses")
            #expect(played.status == 1, "\(source): \(played.stderr)")
            #expect(played.stderr.contains("address policy"), "\(source): \(played.stderr)")
        }
        #expect(server.requests.isEmpty)
        // Without the flag the same track loads.
        let allowed = try await filmstrip("inspect", track)
        #expect(allowed.status == 0, "\(allowed.stderr)")
    }
}
