import FilmstripSync

/// Cancellation for the call a worker is running. Calls are numbered; cancelling call `n` stops it if it is
/// running, or as soon as it starts, and never affects another call. Polled by FFmpeg's interrupt callback, the
/// HTTP source and the decode loops.
package final class CancellationFlag: Sendable {
    private let running = Atomic<Int>(0)
    private let cancelled = Atomic<Int>(-1)

    package init() {}

    /// Marks call `call` as the one running.
    func begin(_ call: Int) { running.store(call, ordering: .sequentiallyConsistent) }
    /// Cancels call `call`.
    func cancel(_ call: Int) { cancelled.store(call, ordering: .sequentiallyConsistent) }
    /// Cancels whatever runs now and later (for inputs owned by one operation).
    package func cancelAll() { cancelled.store(Int.max, ordering: .sequentiallyConsistent) }

    var isCancelled: Bool {
        let c = cancelled.load(ordering: .relaxed)
        return c == Int.max || c == running.load(ordering: .relaxed)
    }
}
