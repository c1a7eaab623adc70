public import FilmstripLoading
import FilmstripSync
public import Foundation

/// Downloads a stream (HLS or DASH, video on demand) into a folder that plays offline: the renditions
/// ``DownloadConfiguration`` chooses, their initialisation sections and keys, and the preview track, fetched a few
/// at a time; each file verified (its length, and a SHA-256 kept in the download's journal) before it is named.
/// A run stopped at any instant (an error, ``cancel()``, a killed process) resumes where it stopped: a verified file
/// is never fetched again. Live streams are refused (``DownloadError/Kind/unsupported``).
///
/// ```swift
/// let downloader = Downloader(url: streamURL, directory: folder)
/// Task { for await p in downloader.progress { print(p.fraction) } }
/// let download = try await downloader.run()
/// ```
public final class Downloader: Sendable {
    /// The stream.
    public let url: URL
    /// The folder it is stored in.
    public let directory: URL
    /// What is taken.
    public let configuration: DownloadConfiguration
    /// Where the download stands, after each file; finishes when ``run()`` returns or throws.
    public let progress: AsyncStream<DownloadProgress>
    private let continuation: AsyncStream<DownloadProgress>.Continuation
    let client: StreamingClient
    private let contentKeys: ContentKeys
    private let license: ClearKeyLicense?
    private let addressPolicy: AddressPolicy
    private let control = Mutex(Control())

    private struct Control {
        var paused = false
        var cancelled = false
        var waiters = Waiters()
        var task: Task<Download, any Error>?
    }

    /// A downloader; nothing is fetched until ``run()``.
    ///
    /// - Parameters:
    ///   - contentKeys, license: for a protected stream, the keys (given, or asked of a ClearKey licence server) to
    ///     store beside the download as its persistent licence; without either, the licence server the manifest
    ///     names (DASH ClearKey `Laurl`) is asked, and without that a protected stream is stored as it is and needs
    ///     its keys when played.
    ///   - decorate: called before every request (headers, signed URLs).
    public init(
        url: URL, directory: URL, configuration: DownloadConfiguration = DownloadConfiguration(),
        transport: (any DataLoading)? = nil,
        loading: LoadingConfiguration = LoadingConfiguration(maximumResponseSize: 256 << 20),
        contentKeys: ContentKeys = ContentKeys(), license: ClearKeyLicense? = nil,
        decorate: StreamingRequestDecorator? = nil
    ) {
        self.url = url
        self.directory = directory
        self.configuration = configuration
        self.contentKeys = contentKeys
        self.license = license
        addressPolicy = loading.addressPolicy
        client = StreamingClient(url: url, transport: transport, configuration: loading, decorate: decorate)
        (progress, continuation) = AsyncStream.makeStream(bufferingPolicy: .bufferingNewest(64))
    }

    /// Downloads what is missing, writes the local playlists, preview track and licence, and returns the download.
    ///
    /// - Throws: ``DownloadError``; what was verified before stays for the next run.
    public func run() async throws -> Download {
        let task = Task { [self] in try await perform() }
        let cancelled = control.withLock { control -> Bool in
            control.task = task
            return control.cancelled
        }
        if cancelled { task.cancel() }
        defer { continuation.finish() }
        return try await withTaskCancellationHandler {
            try await task.value
        } onCancel: {
            cancel()
        }
    }

    /// Starts no new file until ``resume()``; those in flight finish.
    public func pause() { control.withLock { $0.paused = true } }

    /// Goes on after ``pause()``.
    public func resume() {
        control.withLock { control -> Waiters.Taken in
            control.paused = false
            return control.waiters.takeAll()
        }.resume()
    }

    /// Stops the run: ``run()`` throws ``DownloadError/Kind/cancelled``; what was verified stays.
    public func cancel() {
        let (task, waiters) = control.withLock { control in
            control.cancelled = true
            return (control.task, control.waiters.takeAll())
        }
        waiters.resume()
        task?.cancel()
    }

    /// Whether ``pause()`` holds the download.
    public var isPaused: Bool { control.withLock { $0.paused } }

    private func perform() async throws -> Download {
        let store = try DownloadStore(directory: directory, source: url)
        let plan: DownloadPlan
        do {
            plan = try await DownloadPlanner(client: client, configuration: configuration).plan()
        } catch let error as DownloadError {
            throw error
        } catch {
            throw Self.wrap(error, "cannot read the stream \(url.absoluteString)")
        }
        let pending = plan.files.filter { store.verified($0) == nil }
        try checkSpace(store, needed: DownloadPlan.estimate(pending))
        var meter = ProgressMeter(plan: plan, store: store, pending: pending)
        continuation.yield(meter.progress)
        try await fetch(pending, into: store, meter: &meter)
        let finisher = DownloadFinisher(store: store, plan: plan, source: url)
        let keyIDs = try await finisher.keyIDs()
        var licenseFailure: String?
        if !keyIDs.isEmpty, !contentKeys.isEmpty || license != nil {
            try await finisher.storeLicense(keyIDs, keys: contentKeys, license: license)
        } else if !keyIDs.isEmpty, let named = plan.licenseURL {
            // Without keys or a licence server, the one the manifest names (under the loading's address policy);
            // not asked for, so its failure leaves the download without a licence rather than failing it.
            do {
                try await finisher.storeLicense(
                    keyIDs, keys: contentKeys, license: ClearKeyLicense(url: named, addressPolicy: addressPolicy))
            } catch {
                licenseFailure = "\(error)"
            }
        }
        return try finisher.finish(keyIDs: keyIDs, licenseFailure: licenseFailure)
    }

    private func checkSpace(_ store: DownloadStore, needed: Int64) throws(DownloadError) {
        guard let free = store.freeSpace() else { return }
        let (wanted, overflow) = needed.addingReportingOverflow(max(0, configuration.reservedSpace))
        guard overflow || free < wanted else { return }
        func mb(_ bytes: Int64) -> String { String(format: "%.1f MB", Double(bytes) / 1_000_000) }
        throw DownloadError(
            .insufficientSpace,
            "the download needs about \(mb(needed)) and \(mb(configuration.reservedSpace)) kept free; "
                + "\(directory.path) has \(mb(free)) free")
    }

    /// Fetches `pending`, at most `configuration.concurrency` at once, storing each as it arrives.
    private func fetch(_ pending: [DownloadFile], into store: DownloadStore, meter: inout ProgressMeter) async throws {
        let width = max(1, configuration.concurrency)
        try await withThrowingTaskGroup(of: Indexed<Int64>.self) { group in
            var next = 0
            func startNext() {
                guard next < pending.count else { return }
                let file = pending[next]
                let index = next
                next += 1
                group.addTask { [self] in Indexed(index, try await fetchOne(file, into: store)) }
            }
            for _ in 0..<min(width, pending.count) { startNext() }
            while let done = try await group.next() {
                meter.stored(pending[done.index], bytes: done.value)
                continuation.yield(meter.progress)
                startNext()
            }
        }
    }

    private func fetchOne(_ file: DownloadFile, into store: DownloadStore) async throws -> Int64 {
        // Parked while paused; a cancelled task (the group's, when another file failed) is woken and stops.
        await withTaskCancellationHandler {
            await control.wait(in: \.waiters) { !$0.paused || $0.cancelled || Task.isCancelled }
        } onCancel: {
            control.withLock { $0.waiters.takeAll() }.resume()
        }
        if control.withLock({ $0.cancelled }) || Task.isCancelled {
            throw DownloadError(.cancelled, "the download of \(url.absoluteString) was cancelled")
        }
        let data: Data
        do {
            data = try await client.fetcher.fetch(
                file.url, range: file.range, limit: client.limits.maximumSegmentBytes, object: file.object)
        } catch let error as StreamingError where error.kind == .cancelled {
            throw DownloadError(.cancelled, "the download of \(url.absoluteString) was cancelled")
        } catch {
            throw Self.wrap(error, "cannot fetch \(file.path) from \(file.url.absoluteString)")
        }
        if let range = file.range, data.count != range.count {
            throw DownloadError(
                .fetch,
                "\(file.url.absoluteString) bytes \(range.lowerBound)-\(range.upperBound - 1) arrived with "
                    + "\(data.count) bytes, not \(range.count)")
        }
        if data.isEmpty {
            throw DownloadError(.fetch, "\(file.url.absoluteString) answered with no bytes")
        }
        if file.object == .key, data.count != 16 {
            throw DownloadError(
                .fetch, "the AES-128 key \(file.url.absoluteString) is \(data.count) bytes, not 16")
        }
        try store.store(data, as: file)
        return Int64(data.count)
    }

    static func wrap(_ error: any Error, _ what: String) -> DownloadError {
        if let error = error as? DownloadError { return error }
        if let error = error as? StreamingError, error.kind == .cancelled {
            return DownloadError(.cancelled, "cancelled: \(what)", underlying: error)
        }
        if error is CancellationError { return DownloadError(.cancelled, "cancelled: \(what)", underlying: error) }
        return DownloadError(.fetch, what, underlying: error)
    }
}

/// Counts what is stored and estimates what is left.
private struct ProgressMeter {
    var progress: DownloadProgress
    private let started = ContinuousClock.now
    private var fetchedBytes: Int64 = 0
    private var pendingEstimate: Int64

    init(plan: DownloadPlan, store: DownloadStore, pending: [DownloadFile]) {
        let storedBytes = plan.files.reduce(Int64(0)) { $0.saturating(store.verified($1)?.length ?? 0) }
        pendingEstimate = DownloadPlan.estimate(pending)
        progress = DownloadProgress(
            bytes: storedBytes, estimatedBytes: storedBytes.saturating(pendingEstimate),
            files: plan.files.count - pending.count, totalFiles: plan.files.count,
            resumedFiles: plan.files.count - pending.count, bytesPerSecond: 0, estimatedTimeLeft: nil)
    }

    mutating func stored(_ file: DownloadFile, bytes: Int64) {
        fetchedBytes = fetchedBytes.saturating(bytes)
        pendingEstimate = pendingEstimate.saturating(-file.estimate)
        progress.bytes = progress.bytes.saturating(bytes)
        progress.files += 1
        progress.estimatedBytes = progress.bytes.saturating(max(0, pendingEstimate))
        let elapsed = (ContinuousClock.now - started).seconds
        progress.bytesPerSecond = elapsed > 0 ? Double(fetchedBytes) / elapsed : 0
        progress.estimatedTimeLeft =
            progress.bytesPerSecond > 0 ? Double(max(0, pendingEstimate)) / progress.bytesPerSecond : nil
    }
}
