import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// How a child process ended, with its peak memory: what `Process` does not report.
struct ProbeResult: Sendable {
    /// The exit status, when it exited.
    var status: Int32?
    /// The signal that ended it, when one did (SIGKILL after a timeout included).
    var signal: Int32?
    var timedOut: Bool
    /// Peak resident set size, KiB.
    var peakRSSKiB: Int
    var seconds: Double
    var stderr: String
}

/// Runs `executable` with `arguments` (stdout and stderr to files in `directory`), killing it after `timeout`
/// seconds. Blocks: call it from a thread of its own, never from Swift's cooperative pool.
func probe(_ executable: String, _ arguments: [String], timeout: Double, directory: String) -> ProbeResult {
    let started = DispatchTime.now()
    var actions = posix_spawn_file_actions_t()
    posix_spawn_file_actions_init(&actions)
    defer { posix_spawn_file_actions_destroy(&actions) }
    let errPath = directory + "/stderr"
    posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
    posix_spawn_file_actions_addopen(&actions, 1, directory + "/stdout", O_WRONLY | O_CREAT | O_TRUNC, 0o644)
    posix_spawn_file_actions_addopen(&actions, 2, errPath, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
    let argv = ([executable] + arguments).map { strdup($0) } + [nil]
    defer { argv.forEach { free($0) } }
    var pid: pid_t = 0
    let spawned = posix_spawn(&pid, executable, &actions, nil, argv, environ)
    guard spawned == 0 else {
        return ProbeResult(
            status: nil, signal: nil, timedOut: false, peakRSSKiB: 0, seconds: 0,
            stderr: "posix_spawn failed: \(spawned)")
    }
    var status: Int32 = 0
    var usage = rusage()
    var timedOut = false
    let deadline = started.uptimeNanoseconds + UInt64(timeout * 1e9)
    // The child's own peak: its memory's high-water mark (VmHWM), read while it runs. `ru_maxrss` will not do: a
    // spawned child starts as a copy of this (large) test process, and the kernel carries that copy's peak across
    // exec into the child's `ru_maxrss`.
    var peak = 0
    while wait4(pid, &status, WNOHANG, &usage) == 0 {
        peak = max(peak, highWaterMarkKiB(pid))
        if DispatchTime.now().uptimeNanoseconds > deadline {
            timedOut = true
            kill(pid, SIGKILL)
            _ = wait4(pid, &status, 0, &usage)
            break
        }
        pauseWatching(microseconds: 2_000)
    }
    let signalled = status & 0x7F
    let stderr = (try? String(contentsOfFile: errPath, encoding: .utf8)) ?? ""
    return ProbeResult(
        status: signalled == 0 ? (status >> 8) & 0xFF : nil, signal: signalled == 0 ? nil : signalled,
        timedOut: timedOut, peakRSSKiB: peak,
        seconds: Double(DispatchTime.now().uptimeNanoseconds - started.uptimeNanoseconds) / 1e9, stderr: stderr)
}

/// The high-water mark of a running process's resident memory, KiB (0 once it is gone).
func highWaterMarkKiB(_ pid: pid_t) -> Int {
    guard let status = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8),
        let line = status.split(separator: "\n").first(where: { $0.hasPrefix("VmHWM:") })
    else { return 0 }
    return Int(line.split(separator: " ", omittingEmptySubsequences: true).dropFirst().first ?? "") ?? 0
}

/// Runs `work(i)` for `0..<count` on `threads` threads of their own (blocking work stays off the cooperative pool)
/// and returns the results in order.
func onThreads<T: Sendable>(_ count: Int, threads: Int, _ work: @escaping @Sendable (Int) -> T) async -> [T] {
    let box = ThreadWork<T>(count, threads)
    return await withCheckedContinuation { continuation in
        box.continuation = continuation
        for _ in 0..<threads {
            Thread.detachNewThread {
                while true {
                    box.lock.lock()
                    let i = box.next
                    box.next += 1
                    box.lock.unlock()
                    guard i < count else { break }
                    let result = work(i)
                    box.lock.lock()
                    box.results[i] = result
                    box.lock.unlock()
                }
                box.lock.lock()
                box.running -= 1
                let done = box.running == 0
                box.lock.unlock()
                if done { box.continuation?.resume(returning: box.results.map { $0! }) }
            }
        }
    }
}

/// The shared state of ``onThreads(_:threads:_:)``, under its lock.
private final class ThreadWork<T: Sendable>: @unchecked Sendable {
    let lock = NSLock()
    var next = 0
    var results: [T?]
    var running: Int
    var continuation: CheckedContinuation<[T], Never>?
    init(_ count: Int, _ threads: Int) {
        results = Array(repeating: nil, count: count)
        running = threads
    }
}

/// Starts `executable` with `arguments`, its standard output and error to /dev/null; the pid, or -1.
func spawnQuietly(_ executable: String, _ arguments: [String]) -> pid_t {
    var actions = posix_spawn_file_actions_t()
    posix_spawn_file_actions_init(&actions)
    defer { posix_spawn_file_actions_destroy(&actions) }
    posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0)
    posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0)
    let argv = ([executable] + arguments).map { strdup($0) } + [nil]
    defer { argv.forEach { free($0) } }
    var pid: pid_t = 0
    return posix_spawn(&pid, executable, &actions, nil, argv, environ) == 0 ? pid : -1
}

/// The outcomes of a group of probed runs, as the hostile-input tables count them: the table cells after the run
/// count (exit 0 with a right result, typed errors, signals, hangs, wrong results, peak RSS).
func outcomeCells(_ group: [(result: ProbeResult, problems: [String])]) -> String {
    let ok = group.filter { $0.result.status == 0 && $0.problems.isEmpty }.count
    let typed = group.filter { $0.result.status == 1 || $0.result.status == 2 }.count
    let signals = group.filter { $0.result.signal != nil && !$0.result.timedOut }.count
    let hangs = group.filter { $0.result.timedOut }.count
    let wrong = group.filter { $0.problems.contains { $0.hasPrefix("exit 0 but") } }.count
    let peak = group.map(\.result.peakRSSKiB).max() ?? 0
    return "\(group.count) | \(ok) | \(typed) | \(signals) | \(hangs) | \(wrong) | \(peak / 1024) MiB |"
}

/// The one pause of the tests that drive other processes (`filmstrip` children): a child's progress is seen only by
/// looking at it again (its exit status, its files), and a kill at a random moment of its run is a moment of real
/// time; neither is on a clock this process can move.
func pauseWatching(microseconds: UInt32) {
    usleep(microseconds)
}
