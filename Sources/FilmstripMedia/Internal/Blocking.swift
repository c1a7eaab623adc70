import Foundation

/// Hands thread-confined values (FFmpeg contexts, a segment's demuxer, a scaler) to one blocking call. Safe because
/// the caller awaits that call before it touches the values again, so no two threads ever use them at once.
package struct Handoff<T>: @unchecked Sendable {
    package let value: T
    package init(_ value: T) { self.value = value }
}
