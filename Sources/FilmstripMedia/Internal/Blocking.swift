import Foundation

/// Runs blocking work (FFmpeg calls) on a GCD thread, outside Swift's cooperative pool, and awaits the result.
func runBlocking<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
    try await withCheckedThrowingContinuation { continuation in
        DispatchQueue.global(qos: .userInitiated).async {
            do { continuation.resume(returning: try body()) } catch { continuation.resume(throwing: error) }
        }
    }
}
