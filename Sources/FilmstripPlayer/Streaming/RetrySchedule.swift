/// How a failed request is tried again, as a value (one per request).
///
/// - A failure that says the server cannot be reached is, with `waitsForConnectivity`, waited out: the request is
///   tried again with growing pauses (at most two seconds apart) until it succeeds or the waiting has lasted the
///   resource timeout. Without it, such a failure counts as an ordinary failed attempt.
/// - Any other failure is tried again `retries` times, after 0.25 s, 0.5 s, 1 s, … (at most 4 s), then given up.
///
/// ```swift
/// var schedule = RetrySchedule(retries: 3, waitsForConnectivity: false, connectivityBudget: .seconds(30))
/// switch schedule.failed(.other) {
/// case .retry(let delay): try await clock.sleep(for: delay)   // and try again
/// case .giveUp: break                                         // the caller's policy decides (skip or fail)
/// }
/// ```
public struct RetrySchedule: Sendable, Hashable {
    /// What went wrong.
    public enum Failure: Sendable, Hashable {
        /// The server could not be reached (no connection, a timeout).
        case connectivity
        /// Anything else (an HTTP error, a truncated body, bad content).
        case other
    }

    /// What to do.
    public enum Decision: Sendable, Hashable {
        /// Try again after this pause.
        case retry(after: Duration)
        /// Stop trying.
        case giveUp
    }

    /// Attempts after the first one that may fail before giving up.
    public let retries: Int
    /// Whether an unreachable server is waited for.
    public let waitsForConnectivity: Bool
    /// The longest the waiting may last in all.
    public let connectivityBudget: Duration
    /// Failed attempts so far that counted against ``retries``.
    public private(set) var failures = 0
    /// Time spent waiting for connectivity so far.
    public private(set) var waited = Duration.zero
    private var connectivityFailures = 0

    /// Creates a schedule for one request.
    public init(retries: Int, waitsForConnectivity: Bool, connectivityBudget: Duration) {
        self.retries = max(0, retries)
        self.waitsForConnectivity = waitsForConnectivity
        self.connectivityBudget = connectivityBudget
    }

    /// An attempt failed.
    public mutating func failed(_ failure: Failure) -> Decision {
        if failure == .connectivity, waitsForConnectivity {
            guard waited < connectivityBudget else { return .giveUp }
            connectivityFailures += 1
            let pause = min(Self.backoff(connectivityFailures), .seconds(2), connectivityBudget - waited)
            waited += pause
            return .retry(after: pause)
        }
        failures += 1
        return failures <= retries ? .retry(after: Self.backoff(failures)) : .giveUp
    }

    /// The pause after the `n`th failure: 0.25 s doubled per failure, at most 4 s.
    public static func backoff(_ n: Int) -> Duration {
        .milliseconds(min(4000, 250 << min(max(n, 1) - 1, 8)))
    }
}
