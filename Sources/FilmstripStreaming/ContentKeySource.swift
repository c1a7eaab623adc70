import FilmstripSync
public import Foundation

/// Where the keys of protected samples come from: keys given, then a ClearKey licence server asked for each key id
/// not given (once: its answer, or its failure, is kept). Keys stay in memory. A demuxer asks from its own thread,
/// which waits while a licence is fetched.
public final class ContentKeySource: Sendable {
    private let given: ContentKeys
    private let licenseServer: Mutex<ClearKeyLicense?>
    private let fetched = Mutex<[Data: Result<Data, ClearKeyLicense.Failure>]>([:])
    /// Licence requests one at a time: a second asker for the same key id finds the first's answer.
    private let fetching = NSLock()

    public init(keys: ContentKeys = ContentKeys(), license: ClearKeyLicense? = nil) {
        given = keys
        licenseServer = Mutex(license)
    }

    /// Takes `license` as the licence server when none was given (the one a manifest names: DASH ClearKey
    /// `Laurl`); whether it was taken.
    @discardableResult
    public func adopt(_ license: ClearKeyLicense) -> Bool {
        licenseServer.withLock { server in
            guard server == nil else { return false }
            server = license
            return true
        }
    }

    /// Whether any key may come from here (protected samples are then decrypted, and damage after decryption is
    /// taken for a wrong key).
    public var canDecrypt: Bool { !given.isEmpty || licenseServer.withLock { $0 != nil } }

    /// The key for `kid`: given, or asked of the licence server (blocking the calling thread, never a thread of
    /// Swift's cooperative pool, until it answers or times out); `nil` when there is neither.
    ///
    /// - Throws: the licence server's failure (kept for later asks of the same key id).
    public func key(for kid: Data) throws(ClearKeyLicense.Failure) -> Data? {
        if let key = given.key(for: kid) { return key }
        guard let license = licenseServer.withLock({ $0 }) else { return nil }
        if let known = fetched.withLock({ $0[kid] }) { return try known.get() }
        fetching.lock()
        defer { fetching.unlock() }
        if let known = fetched.withLock({ $0[kid] }) { return try known.get() }
        let done = DispatchSemaphore(value: 0)
        let answer = Mutex<Result<ContentKeys, ClearKeyLicense.Failure>?>(nil)
        Task.detached {
            let result: Result<ContentKeys, ClearKeyLicense.Failure>
            do throws(ClearKeyLicense.Failure) {
                result = .success(try await license.keys(for: [kid]))
            } catch {
                result = .failure(error)
            }
            answer.withLock { $0 = result }
            done.signal()
        }
        done.wait()
        let result = answer.withLock { $0! }.map { $0.key(for: kid)! }
        fetched.withLock { $0[kid] = result }
        return try result.get()
    }
}
