/// An injected clock, reduced to what the executors need: the time since the clock was handed over, and sleeping.
/// Tests hand in a `TestClock`; players use `ContinuousClock`.
struct SessionClock: Sendable {
    /// Time since the clock was handed over.
    let now: @Sendable () -> Duration
    /// Sleeps for a duration on the clock (throws when cancelled).
    let sleep: @Sendable (Duration) async throws -> Void

    init<C: Clock>(_ clock: C) where C.Duration == Duration {
        let start = clock.now
        now = { start.duration(to: clock.now) }
        sleep = { try await clock.sleep(for: $0) }
    }
}
