/// A ``RetryPolicy`` applied to one request: after each failed attempt, whether and when to try again. Every retry
/// loop asks it (the loaders' and a player's), so how requests are retried is decided here only.
///
/// - A failure that says the server cannot be reached is, with ``RetryPolicy/waitsForConnectivity``, waited out: the
///   request is tried again with growing pauses (at most two seconds apart) until it succeeds or the waiting has
///   lasted ``RetryPolicy/connectivityBudget``. Without it, such a failure counts as an ordinary failed attempt.
/// - Any other failure is tried again until ``RetryPolicy/maximumAttempts`` have been made, after the policy's
///   backoff, then given up.
///
/// ```swift
/// var schedule = RetrySchedule(RetryPolicy(maximumAttempts: 4, baseDelay: 0.25, jitter: 0))
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

    /// The policy applied.
    public let policy: RetryPolicy
    /// Failed attempts so far that counted against ``RetryPolicy/maximumAttempts``.
    public private(set) var failures = 0
    /// Time spent waiting for connectivity so far.
    public private(set) var waited = Duration.zero
    private var connectivityFailures = 0

    /// A schedule for one request.
    public init(_ policy: RetryPolicy) {
        self.policy = policy
    }

    /// An attempt failed (`retryAfter`: the seconds a server asked for, if it did).
    public mutating func failed(_ failure: Failure, retryAfter: Double? = nil) -> Decision {
        if failure == .connectivity, policy.waitsForConnectivity {
            let budget = Duration.seconds(policy.connectivityBudget)
            guard waited < budget else { return .giveUp }
            connectivityFailures += 1
            let pause = min(
                Self.seconds(policy.delay(afterAttempt: connectivityFailures)), .seconds(2), budget - waited)
            waited += pause
            return .retry(after: pause)
        }
        failures += 1
        guard failures < policy.maximumAttempts else { return .giveUp }
        return .retry(after: Self.seconds(policy.delay(afterAttempt: failures, retryAfter: retryAfter)))
    }

    /// Seconds as a duration, to the millisecond.
    private static func seconds(_ seconds: Double) -> Duration { .milliseconds(Int((seconds * 1000).rounded())) }
}
