/// The states of a player (SPEC 4.1).
public enum PlayerState: Sendable, Hashable, CustomStringConvertible {
    /// Nothing loaded; the initial state.
    case idle
    /// Loading metadata.
    case opening
    /// The track model is known; waiting to load data or start.
    case ready
    /// Not enough data to continue; filling buffers.
    case buffering
    /// Trying to start playback.
    case play
    /// The playhead moves.
    case playing
    /// Trying to pause.
    case pausing
    /// Playback possible but paused.
    case paused
    /// A position change is under way.
    case seeking
    /// The playhead reached the end of the content.
    case ended
    /// Releasing resources.
    case stopping
    /// A fatal error; only a release leaves it.
    case error(PlayerError)

    /// The error of the ``error(_:)`` state, else `nil`.
    public var playerError: PlayerError? {
        if case .error(let error) = self { return error }
        return nil
    }

    /// The state without its payload.
    public var kind: Kind {
        switch self {
        case .idle: .idle
        case .opening: .opening
        case .ready: .ready
        case .buffering: .buffering
        case .play: .play
        case .playing: .playing
        case .pausing: .pausing
        case .paused: .paused
        case .seeking: .seeking
        case .ended: .ended
        case .stopping: .stopping
        case .error: .error
        }
    }

    /// The name of the state, as in `opening`.
    public var description: String { kind.rawValue }

    /// A state without payload, for tables and timeouts.
    public enum Kind: String, Sendable, Hashable, CaseIterable, Codable {
        case idle, opening, ready, buffering, play, playing, pausing, paused, seeking, ended, stopping, error
    }
}

extension PlayerState.Kind {
    /// The states this state may move to. Everything else is refused.
    ///
    /// | from | to |
    /// | --- | --- |
    /// | idle | opening |
    /// | opening | ready, stopping, error |
    /// | ready | buffering, play, pausing, paused, seeking, stopping, error |
    /// | buffering | play, playing, pausing, paused, seeking, ended, stopping, error |
    /// | play | playing, pausing (a refused autoplay), buffering, seeking, ended, stopping, error |
    /// | playing | pausing, buffering, seeking, ended, stopping, error |
    /// | pausing | paused, play, buffering, seeking, stopping, error |
    /// | paused | play, seeking, buffering, stopping, error |
    /// | seeking | play, pausing, buffering, ended, stopping, error |
    /// | ended | seeking (back into the content), opening (new content), stopping, error |
    /// | stopping | idle, error |
    /// | error | stopping (release) |
    public var successors: Set<PlayerState.Kind> {
        switch self {
        case .idle: [.opening]
        case .opening: [.ready, .stopping, .error]
        case .ready: [.buffering, .play, .pausing, .paused, .seeking, .stopping, .error]
        case .buffering: [.play, .playing, .pausing, .paused, .seeking, .ended, .stopping, .error]
        case .play: [.playing, .pausing, .buffering, .seeking, .ended, .stopping, .error]
        case .playing: [.pausing, .buffering, .seeking, .ended, .stopping, .error]
        case .pausing: [.paused, .play, .buffering, .seeking, .stopping, .error]
        case .paused: [.play, .seeking, .buffering, .stopping, .error]
        case .seeking: [.play, .pausing, .buffering, .ended, .stopping, .error]
        case .ended: [.seeking, .opening, .stopping, .error]
        case .stopping: [.idle, .error]
        case .error: [.stopping]
        }
    }

    /// Whether moving to `next` is allowed.
    public func canMove(to next: PlayerState.Kind) -> Bool { successors.contains(next) }
}

/// The player's state as a value: transitions are checked against the graph, refused ones are reported, never
/// performed.
struct PlayerStateMachine: Sendable, Hashable {
    /// The outcome of a requested transition.
    enum Outcome: Sendable, Hashable {
        /// The state changed from `previous` to `current`.
        case moved(previous: PlayerState, current: PlayerState)
        /// The transition is not in the graph; the state is unchanged and `warning` says why.
        case refused(PlayerError)
    }

    /// The current state.
    private(set) var state: PlayerState = .idle

    /// Starts in ``PlayerState/idle``.
    init() {}

    /// Starts in a given state (for restoring a player, and for tests).
    init(state: PlayerState) {
        self.state = state
    }

    /// Moves to `next` if the graph allows it.
    mutating func move(to next: PlayerState) -> Outcome {
        guard state.kind.canMove(to: next.kind) else {
            return .refused(
                PlayerError(
                    .invalidStateTransition, severity: .warning,
                    "the transition \(state.kind.rawValue) -> \(next.kind.rawValue) is not allowed; it was not performed"
                ))
        }
        let previous = state
        state = next
        return .moved(previous: previous, current: next)
    }
}
