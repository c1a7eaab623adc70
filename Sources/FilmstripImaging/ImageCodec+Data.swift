public import Foundation

extension Data: ContiguousBytesLike {
    /// Calls `body` with the bytes.
    public func withBytes<R, E: Error>(_ body: (UnsafeRawBufferPointer) throws(E) -> R) throws(E) -> R {
        let result: Result<R, E> = withUnsafeBytes { raw in
            do throws(E) { return .success(try body(raw)) } catch { return .failure(error) }
        }
        return try result.get()
    }
}
