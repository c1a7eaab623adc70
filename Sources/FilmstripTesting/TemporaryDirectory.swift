public import Foundation

/// A fresh directory under the system's temporary directory, removed by ``remove()``.
public struct TemporaryDirectory: Sendable {
    /// The directory.
    public let url: URL

    /// Creates the directory.
    public init(prefix: String = "filmstrip-test") throws {
        url = FileManager.default.temporaryDirectory
            .appendingPathComponent("\(prefix)-\(UUID().uuidString)", isDirectory: true)
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    }

    /// A path inside the directory.
    public func file(_ name: String) -> URL { url.appendingPathComponent(name, isDirectory: false) }

    /// Writes bytes to a file inside the directory and returns its URL.
    @discardableResult
    public func write(_ name: String, _ bytes: [UInt8]) throws -> URL {
        let file = self.file(name)
        try FileManager.default.createDirectory(
            at: file.deletingLastPathComponent(), withIntermediateDirectories: true)
        try Data(bytes).write(to: file)
        return file
    }

    /// Writes text to a file inside the directory and returns its URL.
    @discardableResult
    public func write(_ name: String, text: String) throws -> URL { try write(name, Array(text.utf8)) }

    /// Removes the directory and everything in it.
    public func remove() { try? FileManager.default.removeItem(at: url) }
}
