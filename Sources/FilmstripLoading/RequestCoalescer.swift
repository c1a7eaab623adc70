import FilmstripSync

/// Shares one in-flight operation among every caller asking for the same key.
///
/// Each caller waits on its own continuation: cancelling one caller ends only that caller's wait. The shared work
/// is cancelled only when every caller has gone.
public final class RequestCoalescer<Key: Hashable & Sendable, Value: Sendable>: Sendable {
    private struct Flight {
        var id: Int
        var task: Task<Void, Never>?
        var waiters: [Int: CheckedContinuation<Value, any Error>] = [:]
    }

    private struct State {
        var flights: [Key: Flight] = [:]
        var nextWaiter = 0
        var started = 0
    }

    private let state = Mutex(State())
    /// The shared operations, which run on after their last caller has gone until they see the cancellation.
    private let flights = BackgroundTasks()

    /// Creates a coalescer.
    public init() {}

    /// How many operations have been started (shared calls count once).
    public var startedCount: Int { state.withLock { $0.started } }
    /// Keys with an operation under way.
    public var inFlightCount: Int { state.withLock { $0.flights.count } }

    /// Returns once no shared operation is running, counting those every caller has left.
    package func settled() async { await flights.settled() }

    /// Returns the result of `operation` for `key`, running it only if no identical call is under way.
    public func value(for key: Key, operation: @escaping @Sendable () async throws -> Value) async throws -> Value {
        let waiter = state.withLock { s -> Int in
            s.nextWaiter += 1
            return s.nextWaiter
        }
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { continuation in
                let flightID = state.withLock { s -> Int? in
                    if Task.isCancelled {
                        continuation.resume(throwing: CancellationError())
                        return nil
                    }
                    if s.flights[key] != nil {
                        s.flights[key]!.waiters[waiter] = continuation
                        return nil
                    }
                    s.started += 1
                    s.flights[key] = Flight(id: s.started, task: nil, waiters: [waiter: continuation])
                    return s.started
                }
                guard let flightID else { return }
                let task = flights.start {
                    let result: Result<Value, any Error>
                    do { result = .success(try await operation()) } catch { result = .failure(error) }
                    let waiters = self.state.withLock { s -> [Int: CheckedContinuation<Value, any Error>] in
                        guard s.flights[key]?.id == flightID else { return [:] }
                        return s.flights.removeValue(forKey: key)?.waiters ?? [:]
                    }
                    for continuation in waiters.values { continuation.resume(with: result) }
                }
                let orphaned = state.withLock { s -> Bool in
                    guard s.flights[key]?.id == flightID else { return true }
                    s.flights[key]!.task = task
                    return false
                }
                if orphaned { task.cancel() }
            }
        } onCancel: {
            let (continuation, orphan) = state.withLock {
                s -> (CheckedContinuation<Value, any Error>?, Task<Void, Never>?) in
                guard let continuation = s.flights[key]?.waiters.removeValue(forKey: waiter) else { return (nil, nil) }
                if s.flights[key]!.waiters.isEmpty {
                    let task = s.flights[key]!.task
                    s.flights[key] = nil
                    return (continuation, task)
                }
                return (continuation, nil)
            }
            orphan?.cancel()
            continuation?.resume(throwing: CancellationError())
        }
    }
}
