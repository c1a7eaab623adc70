import FilmstripLoading
import FilmstripMedia
import FilmstripPlayer
import FilmstripStreaming
import FilmstripSync
import Foundation
import Testing

@Suite("Errors keep their causes as values and print the chain")
struct ErrorChainTests {
    static let url = URL(string: "https://cdn.example.com/show/seg-3.ts")!

    @Test("each cause is a value, and the description names each once")
    func chain() throws {
        let posix = POSIXError(.ECONNRESET)
        let loading = LoadingError(.transport, url: Self.url, "the connection was reset", underlying: posix)
        let streaming = StreamingError(.network, "cannot load the segment", url: Self.url, underlying: loading)
        let player = PlayerError(.sourceUnavailable, severity: .fatal, "segment 3 failed", underlying: streaming)

        // The causes, nearest first, as the values they are.
        #expect(player.causes.count == 3)
        let first = try #require(player.causes.first as? StreamingError)
        #expect(first.kind == .network)
        #expect((player.causes[1] as? LoadingError)?.kind == .transport)
        #expect((player.causes[2] as? POSIXError)?.code == .ECONNRESET)

        let text = player.description
        #expect(text.hasPrefix("fatal source_unavailable: segment 3 failed; caused by: cannot load the segment"))
        #expect(text.contains("caused by: the connection was reset (\(Self.url.absoluteString))"))
        #expect(text.components(separatedBy: "caused by:").count == 4, "\(text)")
        // A message that already quotes its cause does not print it twice.
        let quoting = StreamingError(
            .network, "cannot load the segment: the connection was reset", url: Self.url, underlying: loading)
        #expect(quoting.description.components(separatedBy: "the connection was reset").count == 2, "\(quoting)")

        let media = MediaError(.inputUnavailable, "cannot open the input", url: Self.url, underlying: loading)
        #expect(media.description.contains("caused by: the connection was reset"), "\(media)")
        // The chained message leaves out this error's own place (kept apart in records) but not its causes'.
        #expect(
            media.chainedMessage.hasPrefix(
                "cannot open the input; caused by: the connection was reset (\(Self.url.absoluteString)); caused by: "),
            "\(media.chainedMessage)")
    }
}
