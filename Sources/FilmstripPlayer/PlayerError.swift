public import FilmstripSync

/// An error or warning reported by the player or the SDK (through the SDK-level `onError`).
public struct PlayerError: ChainedError, Sendable, Hashable {
    /// How bad it is.
    public enum Severity: String, Sendable, Hashable, Codable {
        /// Nothing stops; worth knowing (a refused transition, connectivity changes, behind the live window).
        case warning
        /// Something failed and the player carries on or retries (a state timeout, a failed segment).
        case recoverable
        /// Playback cannot continue; the player is in the error state.
        case fatal
    }

    /// What happened. The raw values are the stable identifiers apps match on.
    public enum ErrorType: String, Sendable, Hashable, Codable, CaseIterable {
        case stateTimeoutIdle = "state_timeout_idle"
        case stateTimeoutOpening = "state_timeout_opening"
        case stateTimeoutReady = "state_timeout_ready"
        case stateTimeoutBuffering = "state_timeout_buffering"
        case stateTimeoutPlay = "state_timeout_play"
        case stateTimeoutPlaying = "state_timeout_playing"
        case stateTimeoutPausing = "state_timeout_pausing"
        case stateTimeoutPaused = "state_timeout_paused"
        case stateTimeoutSeeking = "state_timeout_seeking"
        case stateTimeoutEnded = "state_timeout_ended"
        case stateTimeoutStopping = "state_timeout_stopping"
        case stateTimeoutError = "state_timeout_error"
        case playerBehindLiveWindow = "player_behind_live_window"
        case internetConnectionUnavailable = "system_internet_connection_unavailable"
        case internetConnectionAvailable = "system_internet_connection_available"
        case invalidStateTransition = "invalid_state_transition"
        case playbackRateClamped = "playback_rate_clamped"
        case sourceUnavailable = "source_unavailable"
        case sourceInvalid = "source_invalid"
        case decodeFailed = "decode_failed"
        /// A stream segment failed after every retry and was skipped (warning).
        case segmentSkipped = "segment_skipped"
        /// `open(autoplay: true)` was refused by the player's ``AutoplayPolicy``; the player waits paused (warning).
        case autoplayRefused = "autoplay_refused"
        /// A live playlist could not be reloaded; it is retried (warning).
        case playlistReloadFailed = "playlist_reload_failed"
        /// A rendition switch was abandoned because the new rendition's playlist or first segment failed; playback
        /// goes on in the rendition it had (warning).
        case renditionSwitchFailed = "rendition_switch_failed"
        /// The content's audio cannot be decoded (no decoder for its codec); the video plays without it (warning).
        case audioUnavailable = "audio_unavailable"
        /// Protected content (Common Encryption) cannot be decrypted: no key for its key id, a licence refused,
        /// malformed or later than `timeoutIntervalForDrmAcquisitionMs`, or a key that does not decrypt it (fatal,
        /// no picture shown).
        case drmFailed = "drm_failed"

        /// The timeout type of a state.
        public static func stateTimeout(_ state: PlayerState.Kind) -> ErrorType {
            ErrorType(rawValue: "state_timeout_\(state.rawValue)")!
        }
    }

    /// What happened (the name the player API uses; ``kind`` is the same, named as the package's other errors).
    public var type: ErrorType

    /// What happened: ``type``, under the name every error of the package uses for its kind.
    public var kind: ErrorType { type }

    /// ``ErrorType`` under the name every error of the package uses for its kinds.
    public typealias Kind = ErrorType
    /// How bad it is.
    public var severity: Severity
    /// A human-readable explanation.
    public var message: String
    /// The error underneath (a network or streaming error, say), kept as a value; not part of equality.
    public var underlying: (any Error & Sendable)?

    /// Creates an error.
    public init(_ type: ErrorType, severity: Severity, _ message: String, underlying: (any Error & Sendable)? = nil) {
        self.type = type
        self.severity = severity
        self.message = message
        self.underlying = underlying
    }

    public static func == (a: PlayerError, b: PlayerError) -> Bool {
        a.type == b.type && a.severity == b.severity && a.message == b.message
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(type)
        hasher.combine(severity)
        hasher.combine(message)
    }

    /// `severity type: message`; the description adds the causes.
    public var headline: String { "\(severity.rawValue) \(type.rawValue): \(message)" }

    /// The underlying error.
    public var cause: (any Error)? { underlying }
}
