/// Tasks waiting for a condition on state behind a ``Mutex`` (a window closed, a download settled). A waiter is added
/// in the critical section that found the condition false, so whoever makes it true under the same lock finds it;
/// the waiters are resumed outside the lock.
///
/// ```swift
/// await state.wait(in: \.closeWaiters) { $0.closed }
/// let waiters = state.withLock { $0.closed = true; return $0.closeWaiters.takeAll() }
/// waiters.resume()
/// ```
public struct Waiters: Sendable {
    private var continuations: [CheckedContinuation<Void, Never>] = []

    public init() {}

    /// Takes the waiters out (under the lock); resume them with ``Taken/resume()`` once it is released.
    public mutating func takeAll() -> Taken {
        defer { continuations.removeAll() }
        return Taken(continuations: continuations)
    }

    fileprivate mutating func add(_ continuation: CheckedContinuation<Void, Never>) {
        continuations.append(continuation)
    }

    /// Waiters taken out of the list, to be resumed outside the lock.
    public struct Taken: Sendable {
        fileprivate let continuations: [CheckedContinuation<Void, Never>]

        /// No waiters.
        public init() { continuations = [] }

        fileprivate init(continuations: [CheckedContinuation<Void, Never>]) {
            self.continuations = continuations
        }

        public func resume() {
            for continuation in continuations { continuation.resume() }
        }
    }
}

extension Mutex {
    /// Returns once `satisfied` holds for the value (at once if it does), waiting in the list at `waiters` until whoever
    /// makes it hold resumes that list's waiters.
    public func wait(
        in waiters: any WritableKeyPath<Value, Waiters> & Sendable, until satisfied: (borrowing Value) -> Bool
    ) async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let holds = withLock { value -> Bool in
                if satisfied(value) { return true }
                value[keyPath: waiters].add(continuation)
                return false
            }
            if holds { continuation.resume() }
        }
    }
}
