import FilmstripMedia
import FilmstripStreaming
import Foundation

/// What the engine publishes besides state, clock and statistics: stored for the getters, then handed to the
/// callback outside the player's lock.
extension Player {
    /// Whether the rate asks for keyframes only (above 2x).
    var asksKeyframesOnly: Bool { TrickPlayMode.keyframesOnly(rate: shared.withLock { $0.rate }) }

    /// The ranges a seek may land in.
    func publish(seekable ranges: [ClosedRange<Double>]) {
        let callback = shared.withLock { shared in
            shared.seekable = ranges
            return shared.callbacks.onSeekableTimeRanges
        }
        callback?(ranges)
    }

    /// The audio tracks, the one playing marked.
    func publish(audioTracks tracks: [AudioTrack]) {
        let callback = shared.withLock { shared in
            shared.audioTracks = tracks
            return shared.callbacks.onAudioTracks
        }
        callback?(tracks)
    }
}

extension PlayerError {
    /// Content configured for one engine, loaded into a player of another.
    init(_ named: PlayerEngine, playedBy engine: PlayerEngine) {
        self.init(
            .sourceInvalid, severity: .fatal,
            "the configuration names the \(named.rawValue) engine, and this player plays with \(engine.rawValue): "
                + "make the player with player(engine: .\(named))")
    }
}

extension PlayerConfiguration {
    /// What a stream session of this content is configured with, under the merged `network` settings; `budget` is
    /// a request's whole time (the loader's resource timeout).
    func streamSettings(
        network: NetworkConfiguration, budget: Double, fetchesAudio: Bool, prepareLicense: LicenseRequestPreparation?
    ) -> StreamSession.Configuration {
        StreamSession.Configuration(
            streaming: streaming, maxBuffer: maxPrebufferTime,
            keyTimeout: network.timeoutIntervalForDrmAcquisitionMs.map { Double($0) / 1000 },
            retry: SessionRequests.retryPolicy(
                streaming, waitsForConnectivity: network.waitsForConnectivity ?? true, budget: budget),
            optimizeLiveStartup: live.optimizeLiveStartup, preferredAudioLanguage: preferredAudioLanguage,
            fetchesAudio: fetchesAudio, contentKeys: keySource(network: network, prepare: prepareLicense),
            manifestLicense: { Self.license($0, network: network, prepare: prepareLicense) })
    }

    /// Trick play's lookahead at `rate`: about two seconds of playing, and at least what playback waits for to start
    /// or resume.
    func trickCapacity(at rate: Double) -> Double { max(2 * abs(rate), minPrebufferTime, minRebufferTime, 2) }
}
