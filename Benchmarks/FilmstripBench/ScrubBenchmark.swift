import Filmstrip
import FilmstripSync
import FilmstripTesting
import Foundation

/// Prefetch judged on scrub traces: the pointer traces in `Benchmarks/traces` (made by `make_traces.py` there) are
/// replayed against the three-hour track (108 sheets of 100 s, about 345 KB each) over one loopback link shared by
/// every download, at 8 and 2 Mbit/s with 50 ms before each response's first byte. For every pointer sample (30 a
/// second), the figure is the time from the pointer reaching t until a preview of t is available (its sheet local),
/// and, separately, until its sheet or a neighbouring sheet is. Three strategies:
/// - **in order**: every sheet fetched up front from the first, four at a time, nothing on demand;
/// - **look-ahead 2**: on entering a sheet, that sheet and the next two in the direction of the scrub are fetched,
///   six downloads at a time (a browser's per-host limit), in the order asked;
/// - **waves**: Filmstrip as an app uses it, with its default settings: `getThumbnail(atTimestamp:)` on every sample
///   and `prefetch(around:direction:)` whenever the pointer enters another sheet.
///
/// A sample whose sheet is still missing 10 s after the trace ends counts with the time it waited (a lower bound,
/// marked `>`).
enum ScrubBenchmark {
    struct Trace: Decodable {
        let name: String
        let description: String
        let duration: Double
        let samples: [[Double]]
    }

    enum Strategy: String, CaseIterable {
        case inOrder = "in order"
        case lookAhead = "look-ahead 2"
        case waves = "waves"
    }

    /// One sample's waits, seconds; `censored` when the sheet never came.
    struct Wait {
        var exact: Double
        var neighbour: Double
        var censored: Bool
        var neighbourCensored: Bool
        /// The pointer stays in this sheet for at least ``rest`` from this sample.
        var resting: Bool
    }

    static let rest = 0.25

    static let tail = 10.0
    static let latency = 0.05

    static func run(
        _ fixture: BenchFixture, tracesDirectory: URL, strategies: [Strategy] = Strategy.allCases
    ) async throws {
        let traces = try FileManager.default.contentsOfDirectory(at: tracesDirectory, includingPropertiesForKeys: nil)
            .filter { $0.pathExtension == "json" }.sorted { $0.lastPathComponent < $1.lastPathComponent }
            .map { try JSONDecoder().decode(Trace.self, from: Data(contentsOf: $0)) }
        guard !traces.isEmpty else { throw BenchError("no traces in \(tracesDirectory.path)") }
        print(
            "Prefetch on scrub traces (\(traces.map(\.name).joined(separator: ", "))), 3-hour track, "
                + "\(BenchFixture.sheetCount) sheets (\(format(Double(fixture.sheetBytes) / 1e6, 1)) MB), "
                + "one shared link, \(Int(latency * 1000)) ms to each first byte")
        print("  seconds from the pointer reaching t to a preview of t, median / p95 (> a lower bound: never came)")
        for megabits in [8, 2] {
            var results: [String: [Strategy: [Wait]]] = [:]
            for trace in traces {
                for strategy in strategies {
                    results[trace.name, default: [:]][strategy] = try await replay(
                        trace, strategy: strategy, fixture: fixture, megabits: megabits)
                }
            }
            let views: [(String, Pick)] = [
                ("every sample", { ($0.exact, $0.censored) }),
                (
                    "where the pointer rests (≥ \(Int(rest * 1000)) ms in one sheet)",
                    { $0.resting ? ($0.exact, $0.censored) : nil }
                ),
                ("every sample, its sheet or a neighbour's", { ($0.neighbour, $0.neighbourCensored) }),
            ]
            for (title, pick) in views {
                print("  \(megabits) Mbit/s, \(title)")
                print(
                    "    " + "".padding(toLength: 11, withPad: " ", startingAt: 0)
                        + strategies.map { $0.rawValue.padding(toLength: 16, withPad: " ", startingAt: 0) }.joined())
                var pooled: [Strategy: [Wait]] = [:]
                for trace in traces {
                    var line = "    " + trace.name.padding(toLength: 11, withPad: " ", startingAt: 0)
                    for strategy in strategies {
                        let waits = results[trace.name]![strategy]!
                        pooled[strategy, default: []] += waits
                        line += cell(waits, pick)
                    }
                    print(line)
                }
                var line = "    " + "all".padding(toLength: 11, withPad: " ", startingAt: 0)
                for strategy in strategies { line += cell(pooled[strategy]!, pick) }
                print(line)
                guard strategies == Strategy.allCases else { continue }
                let waves = p95(pooled[.waves]!, pick)
                func ratio(_ other: Strategy) -> String {
                    let theirs = p95(pooled[other]!, pick)
                    // Against a lower bound the ratio is an upper bound; from a lower bound it says nothing.
                    guard !waves.censored else { return "unknown (waves' p95 never came)" }
                    return (theirs.censored ? "≤ " : "") + format(waves.value / max(theirs.value, 1e-9), 2)
                }
                print(
                    "    p95 of waves: \(ratio(.inOrder)) of in order's (target ≤ 0.33), \(ratio(.lookAhead)) of "
                        + "look-ahead 2's (target ≤ 0.5)")
            }
        }
        print("")
    }

    /// What a view counts of a sample: its wait and whether that wait was cut off; `nil` leaves the sample out.
    typealias Pick = (Wait) -> (value: Double, censored: Bool)?

    /// Percentile `p` of the waits `pick` keeps, and whether it is a lower bound (at or above the shortest wait that
    /// was cut off).
    static func percentileOf(_ waits: [Wait], _ pick: Pick, _ p: Double) -> (value: Double, censored: Bool) {
        let kept = waits.compactMap(pick)
        let value = percentile(kept.map(\.value).sorted(), p)
        return (value, value >= (kept.filter(\.censored).map(\.value).min() ?? .infinity))
    }

    static func p95(_ waits: [Wait], _ pick: Pick) -> (value: Double, censored: Bool) {
        percentileOf(waits, pick, 95)
    }

    /// "median/p95" of the waits `pick` keeps, padded to a column.
    static func cell(_ waits: [Wait], _ pick: Pick) -> String {
        guard waits.contains(where: { pick($0) != nil }) else {
            return "-".padding(toLength: 16, withPad: " ", startingAt: 0)
        }
        func figure(_ p: Double) -> String {
            let (value, censored) = percentileOf(waits, pick, p)
            return (censored ? ">" : "") + format(value, 2)
        }
        return (figure(50) + "/" + figure(95)).padding(toLength: 16, withPad: " ", startingAt: 0)
    }

    /// Replays one trace with one strategy over a fresh server; returns every sample's waits.
    static func replay(
        _ trace: Trace, strategy: Strategy, fixture: BenchFixture, megabits: Int
    ) async throws -> [Wait] {
        let server = try LoopbackServer()
        defer { server.stop() }
        server.serve("/thumbnails.vtt", text: fixture.trackText)
        for (i, sheet) in fixture.sheets.enumerated() { server.serve("/sheets/sprite-\(i + 1).jpg", body: sheet) }
        let cache = try TemporaryDirectory(prefix: "filmstrip-bench-scrub")
        defer { cache.remove() }
        var configuration = ThumbnailsConfiguration()
        configuration.cacheDirectory = cache.url
        configuration.loadingMode = .lazy
        let thumbnails = TrackThumbnails(configuration: configuration)
        try await thumbnails.load(track: server.url("/thumbnails.vtt"))
        server.limitLink(bytesPerSecond: megabits * 125_000)
        server.setLatency(latency)
        defer { thumbnails.reset() }
        let sheets = BenchFixture.sheetCount
        let sheetSeconds = trace.duration / Double(sheets)
        @Sendable func sheet(_ t: Double) -> Int { min(sheets - 1, max(0, Int(t / sheetSeconds))) }
        @Sendable func middle(_ s: Int) -> Double { (Double(s) + 0.5) * sheetSeconds }
        let arrivals = ArrivalLog(count: sheets)
        let start = now()
        @Sendable func elapsed() -> Double { Double(now() - start) / 1e9 }
        // Sheets become available when their file is local: polled every 10 ms.
        let watcher = Task.detached {
            while !Task.isCancelled {
                let t = elapsed()
                for s in arrivals.missing() where thumbnails.availability(at: middle(s)) != .remote {
                    arrivals.record(s, at: t)
                }
                try? await Task.sleep(nanoseconds: 10_000_000)
            }
        }
        defer { watcher.cancel() }
        let pool = FetchPool(limit: strategy == .lookAhead ? 6 : 4)
        if strategy == .inOrder {
            for s in 0..<sheets { pool.submit { _ = try? await thumbnails.thumbnail(at: middle(s)) } }
        }
        var current = -1
        var previousTime = trace.samples.first?[1] ?? 0
        for sample in trace.samples {
            let due = sample[0] / 1000
            let wait = due - elapsed()
            if wait > 0 { try await Task.sleep(nanoseconds: UInt64(wait * 1e9)) }
            let t = sample[1]
            let direction: ScrubDirection = t >= previousTime ? .forward : .backward
            previousTime = t
            let here = sheet(t)
            switch strategy {
            case .inOrder:
                break
            case .lookAhead:
                guard here != current else { break }
                current = here
                let step = direction == .forward ? 1 : -1
                for s in [here, here + step, here + 2 * step] where (0..<sheets).contains(s) && arrivals.ask(s) {
                    pool.submit { _ = try? await thumbnails.thumbnail(at: middle(s)) }
                }
            case .waves:
                _ = thumbnails.getThumbnail(atTimestamp: t)
                if here != current {
                    current = here
                    thumbnails.prefetch(around: t, direction: direction)
                }
            }
        }
        let traceEnd = elapsed()
        let wanted = Set(trace.samples.map { sheet($0[1]) })
        while elapsed() < traceEnd + tail, !wanted.allSatisfy({ arrivals.time(of: $0) != nil }) {
            try await Task.sleep(nanoseconds: 20_000_000)
        }
        let end = elapsed()
        pool.cancelAll()
        return trace.samples.enumerated().map { i, sample in
            let at = sample[0] / 1000
            let s = sheet(sample[1])
            let later = trace.samples[i...].prefix { $0[0] / 1000 <= at + rest }
            let resting =
                later.allSatisfy { sheet($0[1]) == s } && (later.last.map { $0[0] / 1000 >= at + rest - 0.04 } ?? false)
            func wait(_ sheets: [Int]) -> Double? {
                sheets.compactMap { arrivals.time(of: $0) }.min().map { max(0, $0 - at) }
            }
            let exact = wait([s])
            let neighbour = wait([s - 1, s, s + 1].filter { (0..<sheets).contains($0) })
            return Wait(
                exact: exact ?? (end - at), neighbour: neighbour ?? (end - at), censored: exact == nil,
                neighbourCensored: neighbour == nil, resting: resting)
        }
    }
}

/// When each sheet became local, and which sheets the look-ahead strategy has asked for.
private final class ArrivalLog: Sendable {
    private let state: Mutex<(times: [Double?], asked: Set<Int>)>

    init(count: Int) { state = Mutex((Array(repeating: nil, count: count), [])) }

    func missing() -> [Int] { state.withLock { s in s.times.indices.filter { s.times[$0] == nil } } }
    func record(_ sheet: Int, at t: Double) { state.withLock { $0.times[sheet] = $0.times[sheet] ?? t } }
    func time(of sheet: Int) -> Double? { state.withLock { $0.times[sheet] } }
    /// Whether `sheet` is asked for the first time.
    func ask(_ sheet: Int) -> Bool { state.withLock { $0.asked.insert(sheet).inserted } }
}

/// Runs submitted downloads in the order given, at most `limit` at a time.
private final class FetchPool: Sendable {
    private let state = Mutex<(queue: [@Sendable () async -> Void], running: Int, tasks: [Task<Void, Never>])>(
        ([], 0, []))
    private let limit: Int

    init(limit: Int) { self.limit = limit }

    func submit(_ job: @escaping @Sendable () async -> Void) {
        let start = state.withLock { s -> Bool in
            s.queue.append(job)
            guard s.running < limit else { return false }
            s.running += 1
            return true
        }
        if start { launch() }
    }

    private func launch() {
        let task = Task.detached { [self] in
            while let job = state.withLock({ s -> (@Sendable () async -> Void)? in
                guard !s.queue.isEmpty else {
                    s.running -= 1
                    return nil
                }
                return s.queue.removeFirst()
            }) {
                await job()
            }
        }
        state.withLock { $0.tasks.append(task) }
    }

    func cancelAll() {
        let tasks = state.withLock { s -> [Task<Void, Never>] in
            s.queue.removeAll()
            return s.tasks
        }
        for task in tasks { task.cancel() }
    }
}
