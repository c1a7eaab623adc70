/// The tasks an engine starts on its own (a load with a completion handler, prefetches, a miss's fetch), kept so
/// that ``settled()`` can wait until none is left: the one way to see that nothing more will happen, where waiting
/// a while would only make it likely.
package final class BackgroundTasks: Sendable {
    private struct State {
        var next = 0
        var running: [Int: Task<Void, Never>] = [:]
    }

    private let state = Mutex(State())

    package init() {}

    /// Starts `operation` as an unstructured task (detached when asked), kept until it returns.
    @discardableResult
    package func start(
        priority: TaskPriority? = nil, detached: Bool = false, _ operation: @escaping @Sendable () async -> Void
    ) -> Task<Void, Never> {
        // Registered under the lock that the task's own removal takes, so a task that ends at once is never left
        // behind in the table.
        state.withLock { s in
            let id = s.next
            s.next += 1
            let body: @Sendable () async -> Void = { [self] in
                await operation()
                _ = state.withLock { $0.running.removeValue(forKey: id) }
            }
            let task =
                detached
                ? Task.detached(priority: priority, operation: body) : Task(priority: priority, operation: body)
            s.running[id] = task
            return task
        }
    }

    /// Returns once no task is running, including tasks started by the tasks waited for.
    package func settled() async {
        while true {
            let running = state.withLock { Array($0.running.values) }
            if running.isEmpty { return }
            for task in running { await task.value }
        }
    }
}
