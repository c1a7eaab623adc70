// The package's locks and atomics: the standard library's, re-exported. Built for ThreadSanitizer (`make tsan`
// passes -DFILMSTRIP_TSAN), `Mutex` is a pthread mutex instead: the standard library's waits on futexes directly,
// which the sanitizer does not see, so every guarded access would be reported as a race.
@_exported public import Synchronization

#if FILMSTRIP_TSAN
    #if canImport(Glibc)
        import Glibc
    #elseif canImport(Darwin)
        import Darwin
    #endif

    /// A value behind a pthread mutex, with the standard library `Mutex`'s interface (it shadows it).
    public final class Mutex<Value>: @unchecked Sendable {
        private let lock = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)
        private var value: Value

        public init(_ initialValue: Value) {
            value = initialValue
            pthread_mutex_init(lock, nil)
        }

        deinit {
            pthread_mutex_destroy(lock)
            lock.deallocate()
        }

        public func withLock<Result, E: Error>(_ body: (inout Value) throws(E) -> Result) throws(E) -> Result {
            pthread_mutex_lock(lock)
            defer { pthread_mutex_unlock(lock) }
            return try body(&value)
        }
    }
#endif
