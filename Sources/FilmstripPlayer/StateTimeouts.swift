/// Seconds a player may stay in each state before a recoverable timeout is reported (SPEC 4.4). 0 disables one
/// state's timeout; a `nil` configuration on the player disables all of them.
public struct StateTimeoutConfiguration: Sendable, Hashable, Codable {
    /// Default 0 (disabled).
    public var idle: Double = 0
    /// Default 15.
    public var opening: Double = 15
    /// Default 10.
    public var ready: Double = 10
    /// Default 30.
    public var buffering: Double = 30
    /// Default 10.
    public var play: Double = 10
    /// Default 0: playing is a steady state.
    public var playing: Double = 0
    /// Default 10.
    public var pausing: Double = 10
    /// Default 0: paused is a steady state.
    public var paused: Double = 0
    /// Default 20.
    public var seeking: Double = 20
    /// Default 0 (disabled).
    public var ended: Double = 0
    /// Default 10.
    public var stopping: Double = 10
    /// Default 0 (disabled).
    public var error: Double = 0

    /// The defaults of SPEC 4.4 (see also `init(openingSeconds:bufferingSeconds:seekingSeconds:)` and the other
    /// states' parameters).
    public init() {}

    /// The timeout of a state in seconds (0: none).
    public func seconds(for state: PlayerState.Kind) -> Double {
        switch state {
        case .idle: idle
        case .opening: opening
        case .ready: ready
        case .buffering: buffering
        case .play: play
        case .playing: playing
        case .pausing: pausing
        case .paused: paused
        case .seeking: seeking
        case .ended: ended
        case .stopping: stopping
        case .error: error
        }
    }
}

/// State timeouts as a value driven by the caller's clock: entering a state arms its timer, leaving disarms it,
/// and an expiry is reported once per entry as a recoverable error. The state itself never changes here.
///
/// ```swift
/// var timeouts = StateTimeoutController(configuration: StateTimeoutConfiguration())
/// let deadline = timeouts.enter(.opening, at: clock.now)   // schedule a wake-up at `deadline`, if any
/// if let error = timeouts.check(at: clock.now) { report(error) }
/// ```
struct StateTimeoutController: Sendable, Hashable {
    /// The configuration; `nil` disables every timeout.
    let configuration: StateTimeoutConfiguration?
    /// The state whose timer is armed.
    private(set) var armedState: PlayerState.Kind?
    /// When the armed timer expires (in the caller's clock, seconds).
    private(set) var deadline: Double?

    /// Creates a controller with nothing armed.
    init(configuration: StateTimeoutConfiguration?) {
        self.configuration = configuration
    }

    /// Enters `state` at `now`: disarms the previous timer and arms this state's, if it has one. Returns the
    /// deadline to wake up at, or `nil`.
    @discardableResult
    mutating func enter(_ state: PlayerState.Kind, at now: Double) -> Double? {
        armedState = nil
        deadline = nil
        guard let seconds = configuration?.seconds(for: state), seconds > 0 else { return nil }
        armedState = state
        deadline = now + seconds
        return deadline
    }

    /// Reports the timeout if the armed timer has expired at `now`; then disarms it, so each entry reports once.
    mutating func check(at now: Double) -> PlayerError? {
        guard let state = armedState, let deadline, now >= deadline else { return nil }
        let seconds = configuration?.seconds(for: state) ?? 0
        armedState = nil
        self.deadline = nil
        return PlayerError(
            .stateTimeout(state), severity: .recoverable,
            "the player stayed in \(state.rawValue) for more than \(formatSeconds(seconds)) s")
    }
}

func formatSeconds(_ value: Double) -> String {
    value == value.rounded() ? String(Int(value)) : String(value)
}
