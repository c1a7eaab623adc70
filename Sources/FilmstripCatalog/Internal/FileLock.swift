import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// An exclusive `flock` on a lock file, which the kernel releases when its process dies, however it dies.
///
/// The holder may remove the lock file when it is done. Whoever opened the file before it was removed and gets the
/// lock afterwards holds a lock on a file no longer in the folder, so ``acquire(_:create:)`` checks that the
/// locked file is still the one at the path, and starts again when it is not.
///
/// On shared storage, `flock` must reach every node: NFSv4 and Lustre (mounted with `flock`) do; see the catalog
/// guide.
final class FileLock {
    private var fd: Int32
    /// The lock file.
    let path: String

    private init(fd: Int32, path: String) {
        self.fd = fd
        self.path = path
    }

    /// Takes the lock at `path` without waiting; `nil` when another process holds it, or (with `create` false) when
    /// there is no lock file.
    static func acquire(_ path: String, create: Bool = true) throws(CatalogError) -> FileLock? {
        while true {
            let fd = open(path, O_RDWR | O_CLOEXEC | (create ? O_CREAT : 0), 0o644)
            if fd < 0 {
                if !create, errno == ENOENT { return nil }
                throw CatalogError(.storage, "cannot open the lock \(path): \(Durable.lastError)")
            }
            if flock(fd, LOCK_EX | LOCK_NB) != 0 {
                let busy = errno == EWOULDBLOCK
                let reason = Durable.lastError
                close(fd)
                if busy { return nil }
                throw CatalogError(.storage, "cannot lock \(path): \(reason)")
            }
            var held = stat()
            var named = stat()
            if fstat(fd, &held) == 0, stat(path, &named) == 0, held.st_ino == named.st_ino, held.st_dev == named.st_dev
            {
                return FileLock(fd: fd, path: path)
            }
            // Removed (or replaced) by its previous holder between our open and our lock.
            close(fd)
            if !create { return nil }
        }
    }

    /// Whether another process holds the lock at `path` now (a missing lock file is not held).
    static func isHeld(_ path: String) -> Bool {
        // Opened for writing: over NFS, flock is a POSIX write lock, which a read-only descriptor cannot take.
        let fd = open(path, O_RDWR | O_CLOEXEC)
        guard fd >= 0 else { return false }
        defer { close(fd) }
        if flock(fd, LOCK_EX | LOCK_NB) == 0 {
            flock(fd, LOCK_UN)
            return false
        }
        return errno == EWOULDBLOCK
    }

    /// Releases the lock, removing the lock file first when `removing` (while still holding it).
    func release(removing: Bool) {
        guard fd >= 0 else { return }
        if removing { unlink(path) }
        close(fd)
        fd = -1
    }

    deinit { if fd >= 0 { close(fd) } }
}
