import FilmstripFormats
public import Foundation

/// Content keys of Common Encryption by key id (16 bytes each), held in memory only: what `--key KID:KEY` gives the
/// command line, and what a ClearKey license answers.
public struct ContentKeys: Sendable, Hashable {
    /// Key by key id.
    public private(set) var keys: [Data: Data]

    /// Keys by key id; each must be 16 bytes.
    public init(_ keys: [Data: Data] = [:]) {
        self.keys = keys.filter { $0.key.count == 16 && $0.value.count == 16 }
    }

    /// Keys from `KID:KEY` pairs, each 32 hexadecimal digits (a key id may be written as a UUID, with dashes).
    ///
    /// - Throws: a message naming the pair that is not two 16-byte hexadecimal values.
    public init(pairs: [String]) throws(Malformed) {
        var keys: [Data: Data] = [:]
        for pair in pairs {
            let parts = pair.split(separator: ":", omittingEmptySubsequences: false)
            guard parts.count == 2, let kid = Self.bytes(parts[0]), let key = Self.bytes(parts[1]) else {
                throw Malformed(
                    "a key is KID:KEY, each 32 hexadecimal digits (the KID may have dashes), not \(pair.prefix(80))")
            }
            keys[kid] = key
        }
        self.keys = keys
    }

    /// A key pair that cannot be read.
    public struct Malformed: Error, Sendable, Equatable {
        public var message: String
        public init(_ message: String) { self.message = message }
    }

    /// Whether there is no key.
    public var isEmpty: Bool { keys.isEmpty }

    /// The key for a key id.
    public func key(for kid: Data) -> Data? { keys[kid] }

    /// A key id as lower-case hexadecimal, for messages.
    public static func hex(_ bytes: Data) -> String { bytes.map { String(format: "%02x", $0) }.joined() }

    private static func bytes(_ text: Substring) -> Data? { StreamProtection.keyID(String(text)) }
}
