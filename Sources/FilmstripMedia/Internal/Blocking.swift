import Foundation

/// Runs blocking work (FFmpeg calls) on a GCD thread, outside Swift's cooperative pool, and awaits the result.
func runBlocking<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
    try await withCheckedThrowingContinuation { continuation in
        DispatchQueue.global(qos: .userInitiated).async {
            do { continuation.resume(returning: try body()) } catch { continuation.resume(throwing: error) }
        }
    }
}

/// Hands thread-confined values (FFmpeg contexts, a segment's demuxer, a scaler) to one blocking call. Safe because
/// the caller awaits that call before it touches the values again, so no two threads ever use them at once.
struct Handoff<T>: @unchecked Sendable {
    let value: T
    init(_ value: T) { self.value = value }
}
