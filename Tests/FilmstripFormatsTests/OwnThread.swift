import Foundation

/// Runs long synchronous work on a thread of its own and returns its result.
///
/// Swift Testing runs tests on the cooperative pool, one thread per core: a test that computes for seconds there
/// holds back every other test's continuations, and the ones that measure time (timeouts over loopback) see
/// seconds pass that were never theirs. Expectations stay on the test's task; only the work moves.
func onOwnThread<T: Sendable>(_ work: @escaping @Sendable () throws -> T) async throws -> T {
    try await withCheckedThrowingContinuation { continuation in
        let thread = Thread { continuation.resume(with: Result { try work() }) }
        thread.stackSize = 16 << 20
        thread.start()
    }
}
