import Dispatch

/// Runs blocking work (FFmpeg calls, `fsync`, reading files whole) on a GCD thread, outside Swift's cooperative
/// pool, and awaits the result. The pool has one thread per core: a call that blocks there holds back every task
/// in the process.
public func runBlocking<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
    try await withCheckedThrowingContinuation { continuation in
        DispatchQueue.global(qos: .userInitiated).async {
            do { continuation.resume(returning: try body()) } catch { continuation.resume(throwing: error) }
        }
    }
}
