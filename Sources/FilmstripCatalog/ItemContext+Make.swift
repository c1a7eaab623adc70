import FilmstripLoading
import FilmstripMedia
import FilmstripPreviews
import FilmstripSync
import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

extension ItemContext {
    /// Makes one item (or finds it complete) and records the outcome. File system work that can block (a `stat` on
    /// shared storage, `fsync`, reading outputs back) runs outside the cooperative pool.
    func make(_ item: CatalogItem) async -> CatalogItemOutcome {
        let started = ContinuousClock.now
        var timings = CatalogRecord.Timings(identify: 0, generate: 0, commit: 0, total: 0)
        let identity: ItemIdentity
        do {
            identity =
                item.url.isFileURL
                ? try await runBlocking { try ItemIdentity.ofFile(item.url) }
                : try await ItemIdentity.ofRemote(item.url, loading: options.preview.loading, transport: transport)
        } catch {
            timings.identify = (ContinuousClock.now - started).seconds
            timings.total = timings.identify
            return await failed(item, key: nil, error, timings)
        }
        timings.identify = (ContinuousClock.now - started).seconds
        let key = ContentKey(identity: identity, settings: settings)
        if !options.force, recorded.contains(key), await isComplete(key) {
            return CatalogItemOutcome(item: item, kind: .skipped, key: key, record: nil)
        }

        // Wait for whoever is making this item; it may then be complete.
        let lockPath = catalog.staging.appendingPathComponent(key.hex + ".lock").path
        var lock: FileLock?
        do {
            while true {
                lock = try FileLock.acquire(lockPath)
                if lock != nil { break }
                try await options.lockWaitClock.sleep(for: options.lockPollInterval)
            }
        } catch {
            return await failed(item, key: key, error, timings.finished(started))
        }
        guard let lock else { return await failed(item, key: key, CancellationError(), timings.finished(started)) }
        defer { lock.release(removing: true) }
        // Complete: its maker wrote its done line before it let the lock go, unless it was killed in between.
        if !options.force, await isComplete(key) { return await skipped(item, key, started, timings) }

        let stage = catalog.staging.appendingPathComponent(key.hex, isDirectory: true)
        let generating = ContinuousClock.now
        var preview = options.preview
        preview.workers = options.workers
        let summary: PreviewTrackSummary
        do {
            try await runBlocking {
                Durable.remove(stage.path)
                try Durable.makeDirectory(stage.path)
            }
            summary = try await PreviewTrackGenerator.generate(from: item.url, to: stage, options: preview)
        } catch {
            _ = try? await runBlocking { Durable.remove(stage.path) }
            timings.generate = (ContinuousClock.now - generating).seconds
            return await failed(item, key: key, error, timings.finished(started))
        }
        timings.generate = (ContinuousClock.now - generating).seconds
        let committing = ContinuousClock.now
        let completion: ItemCompletion
        do {
            completion = try await runBlocking {
                try self.commit(item, key: key, identity: identity, summary: summary, stage: stage)
            }
        } catch {
            _ = try? await runBlocking { Durable.remove(stage.path) }
            return await failed(item, key: key, error, timings.finished(started))
        }
        timings.commit = (ContinuousClock.now - committing).seconds
        var record = record(item, key: key, status: .done, timings.finished(started))
        record.outputs = completion.files.map { catalog.relativePath(of: key) + "/" + $0.path }
        record.thumbnails = completion.thumbnails
        record.duration = completion.duration
        record.bytesRead = summary.bytesRead
        record.bytesWritten = completion.files.reduce(0) { $0 + $1.bytes }
        record.forced = options.force ? true : nil
        _ = recorded.insert(key)
        return await write(record, for: item, as: .done)
    }

    /// Whether the item is complete (with ``CatalogRunConfiguration/verify``, and every output still matches its marker).
    private func isComplete(_ key: ContentKey) async -> Bool {
        guard options.verify else { return catalog.isComplete(key) }
        let catalog = self.catalog
        return
            (try? await runBlocking { () -> Bool in
                guard let completion = catalog.completion(of: key) else { return false }
                return CatalogStatus.intact(completion, in: catalog.itemDirectory(of: key))
            }) ?? false
    }

    /// Syncs the staged outputs, writes the completion marker last and renames the folder into `items/`.
    private func commit(
        _ item: CatalogItem, key: ContentKey, identity: ItemIdentity, summary: PreviewTrackSummary, stage: URL
    ) throws(CatalogError) -> ItemCompletion {
        var files: [ItemCompletion.File] = []
        var tracks: [ItemCompletion.Track] = []
        var folders = [stage.path]
        for path in Self.files(under: stage) {
            let url = stage.appendingPathComponent(path)
            guard let data = try? Data(contentsOf: url) else {
                throw CatalogError(.storage, "cannot read back an output", url: url)
            }
            try Durable.sync(url.path)
            files.append(
                .init(
                    path: path, bytes: Int64(data.count),
                    sha256: Digest.sha256Hex(data)))
            let parts = path.split(separator: "/")
            if let format = ItemCompletion.Track.format(ofFileNamed: String(parts.last ?? "")) {
                let width = parts.count == 2 && parts[0].hasPrefix("w") ? Int(parts[0].dropFirst()) : settings.width
                tracks.append(.init(format: format, width: width ?? settings.width, path: path))
            }
            if parts.count > 1 { folders.append(stage.appendingPathComponent(String(parts[0])).path) }
        }
        for folder in Set(folders) { try Durable.sync(folder) }
        let completion = ItemCompletion(
            key: key, input: item.input, identity: identity, settings: settings, files: files, tracks: tracks,
            thumbnails: summary.thumbnails, sheets: summary.sheets, duration: summary.duration,
            tileWidth: summary.tileSize.width, tileHeight: summary.tileSize.height, generation: UUID().uuidString,
            completed: CatalogRecord.timestamp(), host: CatalogRecord.hostName)
        try Durable.write(
            JSONEncoder.catalog.encodeLine(completion), to: stage.appendingPathComponent(Catalog.markerName).path)

        let destination = catalog.itemDirectory(of: key)
        let parent = destination.deletingLastPathComponent().path
        try Durable.makeDirectory(parent)
        // What is there (with --force, or a folder someone broke by hand) is moved aside, then removed.
        let aside = catalog.staging.appendingPathComponent(key.hex + ".old").path
        Durable.remove(aside)
        if rename(destination.path, aside) != 0, errno != ENOENT {
            throw CatalogError(.storage, "cannot move the old outputs aside: \(Durable.lastError)", url: destination)
        }
        guard rename(stage.path, destination.path) == 0 else {
            throw CatalogError(.storage, "cannot move the outputs into place: \(Durable.lastError)", url: destination)
        }
        try Durable.sync(parent)
        Durable.remove(aside)
        return completion
    }

    /// The regular files under `folder`, as sorted relative paths.
    static func files(under folder: URL) -> [String] {
        let base = folder.standardizedFileURL.path
        guard let walker = FileManager.default.enumerator(atPath: base) else { return [] }
        var paths: [String] = []
        for case let path as String in walker {
            var isDirectory: ObjCBool = false
            if FileManager.default.fileExists(atPath: base + "/" + path, isDirectory: &isDirectory),
                !isDirectory.boolValue
            {
                paths.append(path)
            }
        }
        return paths.sorted()
    }

    private func skipped(
        _ item: CatalogItem, _ key: ContentKey, _ started: ContinuousClock.Instant,
        _ timings: CatalogRecord.Timings
    ) async -> CatalogItemOutcome {
        // Called with the item's lock held. Without a done line, its maker was killed between the rename and the line.
        let (catalog, recorded) = (self.catalog, self.recorded)
        let completion = try? await runBlocking { () -> ItemCompletion? in
            recorded.refresh()
            return recorded.insert(key) ? catalog.completion(of: key) : nil
        }
        guard let completion = completion ?? nil else {
            return CatalogItemOutcome(item: item, kind: .skipped, key: key, record: nil)
        }
        var record = record(item, key: key, status: .done, timings.finished(started))
        record.outputs = completion.files.map { catalog.relativePath(of: key) + "/" + $0.path }
        record.thumbnails = completion.thumbnails
        record.duration = completion.duration
        record.bytesWritten = completion.files.reduce(0) { $0 + $1.bytes }
        record.recovered = true
        return await write(record, for: item, as: .skipped)
    }

    private func failed(
        _ item: CatalogItem, key: ContentKey?, _ error: any Error, _ timings: CatalogRecord.Timings
    ) async -> CatalogItemOutcome {
        var record = record(item, key: key, status: .failed, timings)
        record.error = Self.failure(error)
        // A run stopped (SIGTERM) leaves the item for the next one; nothing about the item is known.
        if Task.isCancelled, record.error?.kind == "cancelled" {
            return CatalogItemOutcome(item: item, kind: .cancelled, key: key, record: nil)
        }
        return await write(record, for: item, as: .failed)
    }

    private func record(
        _ item: CatalogItem, key: ContentKey?, status: CatalogRecord.Status,
        _ timings: CatalogRecord.Timings
    ) -> CatalogRecord {
        CatalogRecord(
            key: key, input: item.input, status: status, shard: shard.description,
            directory: key.map(catalog.relativePath(of:)), outputs: [], seconds: timings, host: CatalogRecord.hostName,
            pid: getpid(), finished: CatalogRecord.timestamp())
    }

    /// Appends the line; a results file that cannot be written turns the outcome into a failure on standard
    /// output only (the item's outputs, if any, stay complete).
    private func write(
        _ record: CatalogRecord, for item: CatalogItem, as kind: CatalogItemOutcome.Kind
    ) async -> CatalogItemOutcome {
        let journal = self.journal
        do {
            try await runBlocking { try journal.append(record) }
            return CatalogItemOutcome(item: item, kind: kind, key: record.key, record: record)
        } catch {
            var failed = record
            failed.status = .failed
            failed.error = Self.failure(error)
            return CatalogItemOutcome(item: item, kind: .failed, key: record.key, record: failed)
        }
    }

    /// The kind and message of an error, for the results.
    static func failure(_ error: any Error) -> CatalogRecord.Failure {
        switch error {
        case let error as MediaError:
            return .init(kind: snakeCase(error.kind.rawValue), message: error.chainedMessage)
        case let error as CatalogError:
            return .init(kind: error.kind.rawValue, message: error.chainedMessage)
        case let error as LoadingError:
            return .init(kind: error.kind == .cancelled ? "cancelled" : "input_unavailable", message: error.message)
        case is CancellationError:
            return .init(kind: "cancelled", message: "cancelled")
        default:
            return .init(kind: "error", message: "\(error)")
        }
    }

    private static func snakeCase(_ name: String) -> String {
        name.reduce(into: "") { text, c in
            if c.isUppercase {
                text += "_" + c.lowercased()
            } else {
                text.append(c)
            }
        }
    }
}

extension CatalogRecord.Timings {
    /// With the total taken from `started` to now.
    func finished(_ started: ContinuousClock.Instant) -> Self {
        var timings = self
        timings.total = (ContinuousClock.now - started).seconds
        return timings
    }
}
