import Crypto
import FilmstripFormats
import FilmstripLoading
import Foundation
import _CryptoExtras

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// What the engine learns when a stream opens.
struct HLSOpening {
    var isLive: Bool
    /// Total duration for VOD, 0 for live.
    var duration: Double
    /// First segment start to last segment end, on the player's timeline.
    var window: ClosedRange<Double>
    var targetDuration: Double
}

/// The network half of the HLS engine: playlists, rendition choice, live reloads, and segments fetched ahead into a
/// queue of bytes that ``HLSFrameSource`` decodes.
///
/// One thread fetches; it sleeps on `condition` when the forward buffer holds `maxPrebufferTime` and wakes for a
/// seek, a reload or a stop. Every request goes through the player's loader, so it carries the configured headers
/// and, when enabled, CMCD (headers or query).
///
/// **Timeline.** Segment start times come from their media sequence numbers: the first playlist loaded starts at 0,
/// later reloads and other renditions place each segment by its number, so live positions keep their meaning as the
/// window slides and renditions line up (RFC 8216 requires aligned segment numbers across variants).
///
/// **Runs.** Bytes are queued in runs: segments of one rendition with consecutive numbers and no discontinuity. Each
/// run is decoded by one demuxer and decoder; a switch, a discontinuity, a skipped segment or a seek starts a new run.
final class HLSSession: @unchecked Sendable {
    // Immutable after init.
    let url: URL
    private let transport: any DataLoading
    /// The longest a key request may take (``NetworkConfiguration/timeoutIntervalForDrmAcquisitionMs``).
    private let keyTimeout: Double?
    private let loading: LoadingConfiguration
    private let cmcd: CmcdConfiguration?
    private let streaming: StreamingConfiguration
    private let maxBuffer: Double
    private let report: @Sendable (PlayerError) -> Void

    /// Guards everything below.
    private let condition = NSCondition()
    private var variants: [Variant] = []
    private var active = 0
    private var selector = RenditionSelector(bitrates: [0])
    private var estimator = BandwidthEstimator()
    private var entries: [Entry] = []
    private var seqStart: [Int: Double] = [:]
    private var isLive = false
    /// Whether a media playlist was seen (before that, CMCD `st` is not sent).
    private var typeKnown = false
    private var targetDuration = 0.0
    private var nextReload = 0.0
    private var nextSeq: Int?
    private var generation = 0
    private var chunks: [Chunk] = []
    private var runCounter = 0
    private var runStart = 0.0
    private var finishedRun = 0
    private var lastQueued: (seq: Int, variant: Int)?
    private var complete = false
    private(set) var bufferEnd = 0.0
    private var playhead = 0.0
    private var rate = 1.0
    private var startup = true
    private var starvation = false
    private var stopped = false
    private var interrupted = false
    private var fatal: PlayerError?
    private var connectionLost = false
    private var initSections: [HLSMap: Data] = [:]
    private var keys: [URL: Data] = [:]
    private var thread: Thread?
    // Statistics.
    private var bytesLoaded = 0
    private var segmentsLoaded = 0

    struct Variant {
        var uri: URL
        var bandwidth: Int
        var objectType: CmcdData.ObjectType
        var playlist: HLSMediaPlaylist?
    }

    struct Entry {
        var seq: Int
        var start: Double
        var segment: HLSSegment
        var end: Double { start + segment.duration }
    }

    struct Chunk {
        var run: Int
        var runStart: Double
        var data: Data
        var offset = 0
    }

    /// What the decoder side gets when it asks for the next run.
    enum RunStart {
        case run(id: Int, start: Double)
        case end
        case interrupted
        case failed(PlayerError)
    }

    struct Interrupted: Error {}

    init(
        url: URL, transport: any DataLoading, loading: LoadingConfiguration, keyTimeout: Double? = nil,
        configuration: PlayerConfiguration, report: @escaping @Sendable (PlayerError) -> Void
    ) {
        self.url = url
        self.transport = transport
        self.loading = loading
        self.keyTimeout = keyTimeout
        cmcd = configuration.cmcd
        streaming = configuration.streaming
        maxBuffer = max(1, configuration.maxPrebufferTime)
        // The fetcher reports while it holds its lock; the app's handlers run on a queue of their own, in order, so
        // no app code ever runs under that lock.
        let reports = DispatchQueue(label: "filmstrip.player.reports")
        self.report = { error in reports.async { report(error) } }
    }

    private static func now() -> Double { Double(DispatchTime.now().uptimeNanoseconds) / 1e9 }

    // MARK: Opening

    /// Loads the playlist (and, for a master playlist, the first rendition's). Blocks.
    func open() throws(PlayerError) -> HLSOpening {
        let (data, _) = try fetchOpening(url)
        switch try Self.parse(data, url: url) {
        case .master(let master):
            let usable = master.variants
            guard !usable.isEmpty else {
                throw PlayerError(.sourceInvalid, severity: .fatal, "the master playlist lists no variant streams")
            }
            variants = usable.map {
                Variant(uri: $0.uri, bandwidth: $0.bandwidth, objectType: Self.objectType($0.codecs), playlist: nil)
            }
            selector = RenditionSelector(bitrates: usable.map(\.bandwidth), initial: streaming.startRendition)
            active = selector.current
            let uri = variants[active].uri
            let (mediaData, _) = try fetchOpening(uri)
            variants[active].playlist = try Self.parseMedia(mediaData, url: uri)
        case .media(let media):
            variants = [Variant(uri: url, bandwidth: 0, objectType: .video, playlist: media)]
            selector = RenditionSelector(bitrates: [0])
            active = 0
        }
        let media = variants[active].playlist!
        guard !media.iFramesOnly, !media.imagesOnly else {
            throw PlayerError(.sourceInvalid, severity: .fatal, "an I-frame or image playlist cannot be played")
        }
        condition.withLock {
            isLive = media.isLive
            typeKnown = true
            targetDuration = media.targetDuration
            entries = place(media)
            nextReload = Self.now() + targetDuration
        }
        guard let first = entries.first, let last = entries.last else {
            throw PlayerError(.sourceInvalid, severity: .fatal, "the media playlist has no segments")
        }
        return HLSOpening(
            isLive: isLive, duration: isLive ? 0 : last.end - first.start, window: first.start...last.end,
            targetDuration: targetDuration)
    }

    /// Parses a playlist; a parse error becomes a fatal `source_invalid` naming the URL and line.
    private static func parse(_ data: Data, url: URL) throws(PlayerError) -> HLSPlaylist {
        do {
            return try HLSPlaylistParser().parse(data, url: url)
        } catch {
            throw PlayerError(
                .sourceInvalid, severity: .fatal, "\(url.absoluteString): line \(error.line): \(error.message)")
        }
    }

    /// Parses a playlist that must be a media playlist.
    private static func parseMedia(_ data: Data, url: URL) throws(PlayerError) -> HLSMediaPlaylist {
        guard case .media(let media) = try parse(data, url: url) else {
            throw PlayerError(.sourceInvalid, severity: .fatal, "\(url.absoluteString) is not a media playlist")
        }
        return media
    }

    private func fetchOpening(_ url: URL) throws(PlayerError) -> (Data, Double) {
        var attempt = 0
        while true {
            switch fetch(url, cmcd: condition.withLock { requestData(objectType: .manifest) }) {
            case .success(let result): return result
            case .failure(let error):
                attempt += 1
                if attempt > streaming.segmentRetries || !Self.isTransient(error) {
                    throw PlayerError(.sourceUnavailable, severity: .fatal, "\(error)")
                }
                Thread.sleep(forTimeInterval: Self.backoff(attempt))
            }
        }
    }

    /// Places a playlist's segments on the timeline by media sequence number (see the type's discussion).
    private func place(_ playlist: HLSMediaPlaylist) -> [Entry] {
        let segments = playlist.segments
        guard !segments.isEmpty else { return [] }
        // An anchor: a segment whose start is known, else the first one.
        var anchorIndex = 0
        var anchorStart = 0.0
        if let known = segments.indices.first(where: { seqStart[segments[$0].sequenceNumber] != nil }) {
            anchorIndex = known
            anchorStart = seqStart[segments[known].sequenceNumber]!
        } else if let newest = seqStart.keys.max() {
            // No overlap with what was seen (the window moved on while we were away): extrapolate.
            let gap = Double(segments[0].sequenceNumber - newest)
            anchorStart = seqStart[newest]! + gap * max(playlist.targetDuration, 0.001)
        }
        var starts = [Double](repeating: 0, count: segments.count)
        starts[anchorIndex] = anchorStart
        if anchorIndex > 0 {
            for i in stride(from: anchorIndex - 1, through: 0, by: -1) {
                starts[i] = starts[i + 1] - segments[i].duration
            }
        }
        for i in (anchorIndex + 1)..<max(anchorIndex + 1, segments.count) {
            starts[i] = starts[i - 1] + segments[i - 1].duration
        }
        var placed: [Entry] = []
        placed.reserveCapacity(segments.count)
        for (i, segment) in segments.enumerated() {
            placed.append(Entry(seq: segment.sequenceNumber, start: starts[i], segment: segment))
            seqStart[segment.sequenceNumber] = starts[i]
        }
        if seqStart.count > 4 * segments.count + 64 {
            let oldest = segments[0].sequenceNumber
            seqStart = seqStart.filter { $0.key >= oldest }
        }
        return placed
    }

    // MARK: Control (engine thread)

    /// Starts fetching at the segment containing `time`; returns that segment's start (where playback begins).
    @discardableResult
    func start(at time: Double) -> Double {
        let begin = condition.withLock { () -> Double in
            restart(at: time)
            return bufferEnd
        }
        if thread == nil {
            let thread = Thread { [self] in run() }
            thread.name = "filmstrip.player.hls"
            self.thread = thread
            thread.start()
        }
        return begin
    }

    /// Drops what is queued and fetches from the segment containing `time` (called by the decoder thread).
    func seek(to time: Double) {
        condition.withLock { restart(at: time) }
    }

    private func restart(at time: Double) {
        generation += 1
        chunks.removeAll()
        finishedRun = runCounter
        lastQueued = nil
        complete = false
        interrupted = false
        fatal = nil
        let entry = entries.last(where: { $0.start <= time + 1e-6 }) ?? entries.first
        nextSeq = entry?.seq
        bufferEnd = entry?.start ?? time
        playhead = bufferEnd
        condition.broadcast()
    }

    /// Wakes a decoder blocked on bytes (a seek or stop is coming); its reads fail until the next seek.
    func interrupt() {
        condition.withLock {
            interrupted = true
            condition.broadcast()
        }
    }

    func stop() {
        condition.withLock {
            stopped = true
            interrupted = true
            condition.broadcast()
        }
    }

    /// The engine's view, once per step: where the playhead is, the rate, and whether the player is starting up.
    func update(playhead: Double, rate: Double, startup: Bool) {
        condition.withLock {
            let wake = playhead > self.playhead + 0.25
            self.playhead = playhead
            self.rate = rate
            self.startup = startup
            if wake { condition.broadcast() }
        }
    }

    /// The forward buffer ran dry (CMCD `bs` on the next request).
    func markStarvation() { condition.withLock { starvation = true } }

    /// Seconds fetched ahead of `position`, and whether everything up to the end is fetched.
    func buffered(from position: Double) -> (seconds: Double, complete: Bool, failure: PlayerError?) {
        condition.withLock { (max(0, bufferEnd - position), complete, fatal) }
    }

    /// The live window (first segment start to last segment end), and whether the stream is live.
    var window: (range: ClosedRange<Double>, isLive: Bool, targetDuration: Double)? {
        condition.withLock {
            guard let first = entries.first, let last = entries.last else { return nil }
            return (first.start...last.end, isLive, targetDuration)
        }
    }

    struct Statistics {
        var bitrate: Int?
        var bandwidthEstimate: Double?
        var bytesLoaded: Int
        var segmentsLoaded: Int
        var rendition: Int
    }

    var statistics: Statistics {
        condition.withLock {
            Statistics(
                bitrate: variants.indices.contains(active) && variants[active].bandwidth > 0
                    ? variants[active].bandwidth : nil,
                bandwidthEstimate: estimator.bitsPerSecond, bytesLoaded: bytesLoaded, segmentsLoaded: segmentsLoaded,
                rendition: active)
        }
    }

    // MARK: Decoder side

    /// Blocks until the next run's first bytes are queued (or the end, an interruption or a fatal failure).
    func nextRun() -> RunStart {
        condition.withLock {
            while true {
                if interrupted || stopped { return .interrupted }
                while let first = chunks.first, first.run <= finishedRun { chunks.removeFirst() }
                if let first = chunks.first { return .run(id: first.run, start: first.runStart) }
                if let fatal { return .failed(fatal) }
                if complete { return .end }
                condition.wait()
            }
        }
    }

    /// Copies the next bytes of `run`; 0 once the run is over. Blocks while the fetcher is behind.
    func read(run: Int, into buffer: UnsafeMutableRawBufferPointer) throws -> Int {
        try condition.withLock {
            while true {
                if interrupted || stopped { throw Interrupted() }
                if var first = chunks.first {
                    guard first.run == run else { return 0 }
                    let count = min(buffer.count, first.data.count - first.offset)
                    first.data.withUnsafeBytes { raw in
                        buffer.baseAddress!.copyMemory(from: raw.baseAddress! + first.offset, byteCount: count)
                    }
                    first.offset += count
                    if first.offset >= first.data.count {
                        chunks.removeFirst()
                        condition.broadcast()
                    } else {
                        chunks[0] = first
                    }
                    return count
                }
                if complete || fatal != nil { return 0 }
                condition.wait()
            }
        }
    }

    /// The decoder is done with `run`; leftovers are dropped.
    func finish(run: Int) {
        condition.withLock { finishedRun = max(finishedRun, run) }
    }

    // MARK: Fetching

    private func run() {
        condition.lock()
        while !stopped {
            let now = Self.now()
            if isLive, now >= nextReload {
                condition.unlock()
                reload()
                condition.lock()
                continue
            }
            guard fatal == nil, let seq = nextSeq, !entries.isEmpty else {
                wait(until: isLive ? nextReload : now + 1)
                continue
            }
            if seq < entries[0].seq {
                // The window moved past the next segment (a long pause or a slow network): go on from its start.
                nextSeq = entries[0].seq
                continue
            }
            guard let index = entries.firstIndex(where: { $0.seq == seq }) else {
                if !isLive {
                    complete = true
                    condition.broadcast()
                }
                wait(until: isLive ? nextReload : now + 1)
                continue
            }
            if bufferEnd - playhead >= maxBuffer {
                wait(until: isLive ? min(nextReload, now + 0.5) : now + 0.5)
                continue
            }
            if streaming.adaptiveBitrate, variants.count > 1 {
                let choice = selector.next(estimate: estimator.bitsPerSecond)
                if choice != active {
                    condition.unlock()
                    let switched = switchRendition(to: choice)
                    condition.lock()
                    if switched { continue }
                    selector.switchFailed()
                }
            }
            fetchSegment(entries[index], next: entries.indices.contains(index + 1) ? entries[index + 1] : nil)
        }
        condition.unlock()
    }

    private func wait(until deadline: Double) {
        let seconds = max(0.005, deadline - Self.now())
        _ = condition.wait(until: Date(timeIntervalSinceNow: seconds))
    }

    /// Loads another rendition's playlist and makes it the active one. Called unlocked; false when it failed (the
    /// current rendition stays).
    private func switchRendition(to index: Int) -> Bool {
        let (uri, data) = condition.withLock { (variants[index].uri, requestData(objectType: .manifest)) }
        guard case .success(let (data, _)) = fetch(uri, cmcd: data),
            let media = try? Self.parseMedia(data, url: uri)
        else { return false }
        condition.withLock {
            variants[index].playlist = media
            active = index
            entries = place(media)
            if media.endList { isLive = false }
        }
        return true
    }

    /// Reloads the live playlist (RFC 8216, 6.3.4): again after one target duration when it changed, half of one
    /// when it did not, and after half of one when the reload failed.
    private func reload() {
        let (uri, data) = condition.withLock { (variants[active].uri, requestData(objectType: .manifest)) }
        let result = fetch(uri, cmcd: data)
        condition.lock()
        defer { condition.unlock() }
        let now = Self.now()
        switch result {
        case .success(let (data, _)):
            restored()
            guard let media = try? Self.parseMedia(data, url: uri) else {
                report(
                    PlayerError(
                        .playlistReloadFailed, severity: .warning,
                        "the reloaded playlist \(uri.absoluteString) is not a valid media playlist; retrying"))
                nextReload = now + targetDuration / 2
                return
            }
            let previousLast = entries.last?.seq
            variants[active].playlist = media
            targetDuration = media.targetDuration
            entries = place(media)
            if media.endList { isLive = false }
            let changed = entries.last?.seq != previousLast
            nextReload = now + (changed ? targetDuration : targetDuration / 2)
            condition.broadcast()
        case .failure(let error):
            if Self.isConnectivity(error) { lost(error) }
            report(
                PlayerError(
                    .playlistReloadFailed, severity: .warning,
                    "the live playlist could not be reloaded (\(error)); retrying in \(formatSeconds(targetDuration / 2)) s"
                ))
            nextReload = now + targetDuration / 2
        }
    }

    /// Fetches one segment (with its initialisation section when a run starts) and queues it. Called locked; unlocks
    /// while the request runs. Retries per ``StreamingConfiguration``.
    private func fetchSegment(_ entry: Entry, next: Entry?) {
        let generation = self.generation
        let variant = active
        let newRun =
            lastQueued.map { $0.variant != variant || $0.seq + 1 != entry.seq } ?? true || entry.segment.discontinuity
        let objectType = variants[variant].objectType
        var data = requestData(objectType: objectType)
        data.encodedBitrate = variants[variant].bandwidth > 0 ? Double(variants[variant].bandwidth) / 1000 : nil
        data.objectDuration = entry.segment.duration * 1000
        data.nextObjectRequest = next?.segment.uri.absoluteString
        let map = entry.segment.map
        let cachedInit = map.flatMap { initSections[$0] }
        var attempt = 0
        while !stopped, generation == self.generation {
            condition.unlock()
            var result: Result<(Data, Double), LoadingError>
            var payload = Data()
            // The initialisation section goes in front of the first segment of a run.
            if newRun, let map, cachedInit == nil {
                var initData = requestData(objectType: .initSegment)
                initData.encodedBitrate = data.encodedBitrate
                result = fetch(map.uri, range: map.byteRange, cmcd: initData)
                if case .success(let (bytes, _)) = result {
                    condition.withLock { initSections[map] = bytes }
                    payload = bytes
                    result = fetch(entry.segment.uri, range: entry.segment.byteRange, cmcd: data)
                }
            } else {
                if newRun, let cachedInit { payload = cachedInit }
                result = fetch(entry.segment.uri, range: entry.segment.byteRange, cmcd: data)
            }
            if case .success(let (bytes, seconds)) = result, let key = entry.segment.key {
                result = decrypt(bytes, key: key, sequence: entry.seq).map { ($0, seconds) }
            }
            condition.lock()
            guard generation == self.generation, !stopped else { return }
            switch result {
            case .success(let (bytes, seconds)):
                restored()
                // The first segment of a chosen rendition commits the switch.
                selector.arrived(from: variant)
                estimator.add(bytes: bytes.count, seconds: seconds)
                bytesLoaded += bytes.count
                segmentsLoaded += 1
                if newRun {
                    runCounter += 1
                    runStart = entry.start
                }
                payload = payload.isEmpty ? bytes : payload + bytes
                chunks.append(Chunk(run: runCounter, runStart: runStart, data: payload))
                lastQueued = (entry.seq, variant)
                bufferEnd = entry.end
                nextSeq = entry.seq + 1
                starvation = false
                condition.broadcast()
                return
            case .failure(let error):
                attempt += 1
                // A key that does not come in time is a failed acquisition, not a lost connection: it is retried
                // like a segment, then the missing-segment policy applies.
                let keyFailed = entry.segment.key?.uri == error.url
                if Self.isConnectivity(error), !keyFailed {
                    // The server is gone: keep trying (the buffer drains, the player buffers) until it is back.
                    lost(error)
                    wait(until: Self.now() + min(2, Self.backoff(attempt)))
                    continue
                }
                if attempt <= streaming.segmentRetries {
                    wait(until: Self.now() + Self.backoff(attempt))
                    continue
                }
                // A switch whose first segment cannot be had is abandoned, and the segment is fetched again from
                // the committed rendition: nothing is skipped for a switch that did not happen.
                if selector.pending == variant {
                    selector.switchFailed()
                    report(
                        PlayerError(
                            .renditionSwitchFailed, severity: .warning,
                            "the switch to rendition \(variant) was abandoned: its segment \(entry.seq) failed (\(error))"
                        ))
                    condition.broadcast()
                    return
                }
                switch streaming.missingSegmentPolicy {
                case .skip:
                    report(
                        PlayerError(
                            .segmentSkipped, severity: .warning,
                            "segment \(entry.seq) failed after \(attempt) attempts and was skipped: \(error)"))
                    nextSeq = entry.seq + 1
                    bufferEnd = entry.end
                    lastQueued = nil  // a new run after the hole
                case .fail:
                    fatal = PlayerError(
                        .sourceUnavailable, severity: .fatal,
                        "segment \(entry.seq) failed after \(attempt) attempts: \(error)")
                }
                condition.broadcast()
                return
            }
        }
    }

    /// Decrypts an AES-128 segment (RFC 8216 5.2: CBC with PKCS7 padding; without an IV attribute the IV is the
    /// media sequence number, big-endian). The key is fetched once per URI. Called unlocked.
    private func decrypt(_ bytes: Data, key: HLSKey, sequence: Int) -> Result<Data, LoadingError> {
        var keyData = condition.withLock { keys[key.uri] }
        if keyData == nil {
            switch fetch(key.uri, cmcd: condition.withLock { requestData(objectType: .key) }, timeout: keyTimeout) {
            case .success(let (data, _)):
                guard data.count == 16 else {
                    return .failure(
                        LoadingError(
                            .invalidContent, url: key.uri, "an AES-128 key must be 16 bytes (got \(data.count))"))
                }
                keyData = data
                condition.withLock { keys[key.uri] = data }
            case .failure(let error) where error.kind == .timedOut && keyTimeout != nil:
                return .failure(
                    LoadingError(
                        .timedOut, url: key.uri,
                        "the key \(key.uri.absoluteString) did not arrive within timeoutIntervalForDrmAcquisitionMs "
                            + "(\(formatSeconds(keyTimeout!)) s)", underlying: error))
            case .failure(let error):
                return .failure(error)
            }
        }
        let iv =
            key.iv
            ?? (0..<16).map { i in i < 8 ? 0 : UInt8(truncatingIfNeeded: UInt64(sequence) >> (8 * (15 - i))) }
        do {
            let plain = try AES._CBC.decrypt(
                bytes, using: SymmetricKey(data: keyData!), iv: try AES._CBC.IV(ivBytes: iv))
            return .success(plain)
        } catch {
            return .failure(
                LoadingError(
                    .invalidContent, url: key.uri, "segment \(sequence) does not decrypt with its AES-128 key: \(error)"
                ))
        }
    }

    private func lost(_ error: LoadingError) {
        guard !connectionLost else { return }
        connectionLost = true
        report(
            PlayerError(
                .internetConnectionUnavailable, severity: .warning,
                "the server cannot be reached (\(error.message)); retrying"))
    }

    private func restored() {
        guard connectionLost else { return }
        connectionLost = false
        report(PlayerError(.internetConnectionAvailable, severity: .warning, "the server can be reached again"))
    }

    private static func backoff(_ attempt: Int) -> Double { min(4, 0.25 * Double(1 << min(attempt - 1, 8))) }

    private static func isConnectivity(_ error: LoadingError) -> Bool {
        switch error.kind {
        case .transport, .timedOut: true
        default: false
        }
    }

    private static func isTransient(_ error: LoadingError) -> Bool {
        switch error.kind {
        case .transport, .timedOut, .truncated: true
        case .httpStatus(let code): code == 408 || code == 429 || code >= 500
        default: false
        }
    }

    // MARK: Requests

    /// The CMCD fields every request shares (call locked).
    private func requestData(objectType: CmcdData.ObjectType) -> CmcdData {
        var data = CmcdData(
            sessionID: cmcd?.sessionID, contentID: cmcd?.contentID, streamingFormat: .hls,
            streamType: typeKnown ? (isLive ? .live : .vod) : nil)
        data.objectType = objectType
        data.startup = startup
        data.bufferStarvation = starvation
        data.playbackRate = rate == 1 ? nil : rate
        data.measuredThroughput = estimator.bitsPerSecond.map { $0 / 1000 }
        if objectType != .manifest {
            let buffer = max(0, bufferEnd - playhead)
            data.bufferLength = buffer * 1000
            if rate > 0 { data.deadline = buffer / rate * 1000 }
            data.topBitrate = variants.map(\.bandwidth).max().flatMap { $0 > 0 ? Double($0) / 1000 : nil }
        }
        return data
    }

    /// One request through the player's loader with the CMCD data attached (headers or query); blocks, returns the
    /// body and the seconds it took.
    private func fetch(
        _ url: URL, range: Range<Int64>? = nil, cmcd data: CmcdData, timeout: Double? = nil
    ) -> Result<(Data, Double), LoadingError> {
        var configuration = loading
        if let timeout {
            // A bound of the request's own: neither the first byte nor the whole body may take longer.
            configuration.requestTimeout = min(configuration.requestTimeout, timeout)
            configuration.resourceTimeout = min(configuration.resourceTimeout, timeout)
        }
        var target = url
        if let range { configuration.additionalHeaders["Range"] = "bytes=\(range.lowerBound)-\(range.upperBound - 1)" }
        if let cmcd {
            switch cmcd.mode {
            case .headers:
                for (name, value) in CmcdEncoder.headers(data, keys: cmcd.keys, baseURL: url) {
                    configuration.additionalHeaders[name] = value
                }
            case .query:
                target = CmcdEncoder.url(url, adding: data, keys: cmcd.keys, baseURL: url)
            }
        }
        let done = DispatchSemaphore(value: 0)
        let outcome = ResultBox()
        let started = Self.now()
        let task = transport.startLoad(target, configuration: configuration) { result in
            outcome.set(result)
            done.signal()
        }
        // Wait, but give up promptly when the session stops.
        while done.wait(timeout: .now() + 0.1) == .timedOut {
            if condition.withLock({ stopped }) {
                task?.cancel()
                done.wait()
            }
        }
        let seconds = Self.now() - started
        switch outcome.value {
        case .success(let response)?:
            return .success((response.data, seconds))
        case .failure(let error as LoadingError)?:
            return .failure(error)
        case .failure(let error)?:
            return .failure(LoadingError(.transport, url: url, "\(error)", underlying: error))
        case nil:
            return .failure(LoadingError(.cancelled, url: url, "cancelled"))
        }
    }

    /// The CMCD object type of a variant from its `CODECS`: audio and video, audio only, else video.
    static func objectType(_ codecs: String?) -> CmcdData.ObjectType {
        guard let codecs = codecs?.lowercased() else { return .video }
        let list = codecs.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }
        let audio = list.contains { ["mp4a", "ac-3", "ec-3", "opus", "flac", "alac"].contains(where: $0.hasPrefix) }
        let video = list.contains { ["avc", "hvc", "hev", "av01", "vp0", "vp9", "dvh"].contains(where: $0.hasPrefix) }
        if audio, video { return .muxed }
        if audio { return .audio }
        return .video
    }
}

/// The result of a callback, handed across threads under a lock.
private final class ResultBox: @unchecked Sendable {
    private let lock = NSLock()
    private var stored: Result<LoadResponse, any Error>?

    func set(_ result: Result<LoadResponse, any Error>) { lock.withLock { stored = result } }
    var value: Result<LoadResponse, any Error>? { lock.withLock { stored } }
}
