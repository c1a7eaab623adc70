import FilmstripLoading
import FilmstripPlayer
import FilmstripStreaming
import FilmstripTesting
import Foundation
import Testing

/// `Downloader` over the loopback server on the layouts the ffmpeg muxers write and on Shaka Packager's protected
/// streams: every file fetched once and verified, then the download played with the server stopped (frames checked
/// against their times); the choice of renditions from the request log; pause, resume, cancel and resume; the disk
/// space check; failures that leave nothing named.
@Suite("Downloads", .serialized)
struct DownloadTests {
    static func play(_ configuration: PlayerConfiguration) async -> PlayerRecorder {
        let virtual = VirtualPlayer()
        let recorder = PlayerRecorder()
        recorder.observe(virtual.player)
        virtual.player.playbackRate = 2
        virtual.player.open(config: configuration)
        await recorder.wait(for: .ended, on: virtual)
        return recorder
    }

    /// Frames that are not the layout's frame at their time.
    static func wrongFrames(_ frames: [(time: Double, frame: Int?)], _ layout: StreamLayout) -> [String] {
        frames.compactMap { time, number -> String? in
            let (source, sourceTime) = layout.source(at: time + 1e-4)
            let expected = Int((sourceTime * source.frameRate + 1e-3).rounded(.down))
            return number.map({ abs($0 - expected) <= 1 }) == true
                ? nil : "t=\(time): frame \(number ?? -1), expected \(expected)"
        }
    }

    @Test(
        "each layout: every file fetched once, verified, and the download plays offline with the source's frames",
        arguments: [
            StreamLayout.hlsFMP4, .hlsSingleFileTS, .hlsSingleFileFMP4, .hlsDiscontinuity, .hlsAES, .dashTimeline,
            .dashOnDemand, .dashSegmentList, .dashTwoPeriods, .dashTrickMode,
        ])
    func layouts(_ layout: StreamLayout) async throws {
        let server = try LoopbackServer()
        defer { server.stop() }
        let url = try StreamLayouts.serve(layout, on: server)
        let directory = try TemporaryDirectory(prefix: "filmstrip-download")
        defer { directory.remove() }
        let download = try await Downloader(url: url, directory: directory.file("d")).run()
        #expect(try download.verify().isEmpty)
        #expect(download.files > 0 && abs(download.duration - layout.duration) < 0.2, "\(layout): \(download)")
        let asked = server.requests.map { "\($0.path) \($0.headers["range"] ?? "")" }
        #expect(Set(asked).count == asked.count, "\(layout): a request made twice: \(asked)")
        if layout == .dashTrickMode { #expect(download.iFramePlaylistURL != nil) }
        server.stop()
        let recorder = await Self.play(PlayerConfiguration(with: download.directory))
        #expect(recorder.errors.isEmpty, "\(layout): \(recorder.errors)")
        let frames = recorder.frames
        #expect(frames.count >= Int(layout.duration * 4), "\(layout): \(frames.count) frames")
        let wrong = Self.wrongFrames(frames, layout)
        #expect(wrong.isEmpty, "\(layout): \(wrong.count) of \(frames.count) wrong: \(wrong.prefix(4))")
        #expect((frames.last?.time ?? 0) > layout.duration - 0.5)
    }

    @Test("the chosen renditions' bytes and the manifests, nothing else; audio by language; the local master")
    func choice() async throws {
        let server = try LoopbackServer()
        defer { server.stop() }
        let url = try StreamLayouts.serve(.hlsVariants, on: server)
        let directory = try TemporaryDirectory(prefix: "filmstrip-download")
        defer { directory.remove() }
        var choice = DownloadConfiguration()
        choice.maximumHeight = 200
        choice.audioLanguages = ["fr"]
        let download = try await Downloader(url: url, directory: directory.file("d"), configuration: choice).run()
        let paths = server.requests.map(\.path)
        let playlists = paths.filter { $0.hasSuffix(".m3u8") }
        #expect(
            Set(playlists)
                == ["/hlsVariants/master.m3u8", "/hlsVariants/v160/index.m3u8", "/hlsVariants/fra/index.m3u8"])
        let media = paths.filter { !$0.hasSuffix(".m3u8") }
        #expect(media.allSatisfy { $0.hasPrefix("/hlsVariants/v160/") || $0.hasPrefix("/hlsVariants/fra/") })
        // Every segment the two playlists list, once.
        let source = try StreamLayouts.directory(.hlsVariants)
        var listed: [String] = []
        for folder in ["v160", "fra"] {
            let text = try String(
                contentsOf: source.appendingPathComponent("\(folder)/index.m3u8"), encoding: .utf8)
            listed += text.split(separator: "\n").filter { !$0.hasPrefix("#") }.map { "/hlsVariants/\(folder)/\($0)" }
        }
        #expect(media.sorted() == listed.sorted())
        // The bytes stored are the bytes the server sent for them.
        let sent = Set(media).reduce(0) { $0 + server.bytesSent($1) }
        #expect(Int64(sent) == download.bytes, "sent \(sent), stored \(download.bytes)")
        let master = try String(contentsOf: download.manifestURL, encoding: .utf8)
        #expect(master.contains("RESOLUTION=160x120") && master.contains("LANGUAGE=\"fra\""), "\(master)")
        #expect(!master.contains("eng"))
        server.stop()
        let recorder = await Self.play(PlayerConfiguration(with: download.manifestURL))
        #expect(recorder.errors.isEmpty && recorder.frames.count >= 40, "\(recorder.errors)")
    }

    @Test("pause holds new files, resume goes on; cancel stops with what was verified kept, and a new run resumes")
    func pauseAndCancel() async throws {
        let server = try LoopbackServer()
        defer { server.stop() }
        server.setLatency(0.05)
        let url = try StreamLayouts.serve(.dashTimeline, on: server)
        // The third segment answers after 30 s: the run cannot end before it is cancelled.
        let held = "/dashTimeline/chunk-0-00003.m4s"
        server.fail(held, with: [.delay(30)])
        let directory = try TemporaryDirectory(prefix: "filmstrip-download")
        defer { directory.remove() }
        var choice = DownloadConfiguration()
        choice.concurrency = 1
        let first = Downloader(url: url, directory: directory.file("d"), configuration: choice)
        first.pause()
        let run = Task { try await first.run() }
        var iterator = first.progress.makeAsyncIterator()
        let start = await iterator.next()
        #expect(start?.files == 0 && start?.totalFiles ?? 0 > 4)
        // Paused before the first file: nothing but the manifest is asked for.
        try await Task.sleep(for: .milliseconds(400))
        #expect(server.requests.allSatisfy { $0.path.hasSuffix(".mpd") }, "\(server.requests.map(\.path))")
        first.resume()
        // Cancelled while the held segment is asked for (the fault spent, so the next run gets it at once).
        var stored = 0
        while stored < 3, let progress = await iterator.next() { stored = progress.files }
        #expect(await eventually { server.requests.contains { $0.path == held } })
        first.cancel()
        await #expect(throws: DownloadError.self) { _ = try await run.value }
        do {
            _ = try await run.value
        } catch let error as DownloadError {
            #expect(error.kind == .cancelled)
        }
        #expect(!FileManager.default.fileExists(atPath: directory.file("d/master.m3u8").path))
        let again = Downloader(url: url, directory: directory.file("d"))
        let resumed = Task { try await again.run() }
        let first2 = await again.progress.first { _ in true }
        let download = try await resumed.value
        #expect(stored == 3 && first2?.resumedFiles == 3, "\(String(describing: first2))")
        #expect(try download.verify().isEmpty)
    }

    @Test("refused: too little space, a foreign or busy folder, a remote playlist naming a local file, a live stream")
    func refusals() async throws {
        let server = try LoopbackServer()
        defer { server.stop() }
        let url = try StreamLayouts.serve(.hlsFMP4, on: server)
        let directory = try TemporaryDirectory(prefix: "filmstrip-download")
        defer { directory.remove() }
        var choice = DownloadConfiguration()
        choice.reservedSpace = Int64.max / 4
        await #expect {
            _ = try await Downloader(url: url, directory: directory.file("d"), configuration: choice).run()
        } throws: { ($0 as? DownloadError)?.kind == .insufficientSpace }
        #expect(server.requests.allSatisfy { $0.path.hasSuffix(".m3u8") })
        // Another stream into the same folder.
        let other = try StreamLayouts.serve(.dashTimeline, on: server)
        await #expect {
            _ = try await Downloader(url: other, directory: directory.file("d")).run()
        } throws: { ($0 as? DownloadError)?.kind == .conflict }
        // A folder with other things in it.
        _ = try directory.write("busy/notes.txt", text: "mine")
        await #expect {
            _ = try await Downloader(url: url, directory: directory.file("busy")).run()
        } throws: { ($0 as? DownloadError)?.kind == .conflict }
        #expect(try String(contentsOf: directory.file("busy/notes.txt"), encoding: .utf8) == "mine")
        // A remote playlist that names a local file: refused, nothing read from the disk or stored.
        server.serve(
            "/evil/index.m3u8",
            text: "#EXTM3U\n#EXT-X-TARGETDURATION:2\n#EXTINF:2,\nfile:///etc/hostname\n#EXT-X-ENDLIST\n",
            contentType: "application/vnd.apple.mpegurl")
        await #expect {
            _ = try await Downloader(url: server.url("/evil/index.m3u8"), directory: directory.file("evil")).run()
        } throws: { "\($0)".contains("local file") }
        #expect(!FileManager.default.fileExists(atPath: directory.file("evil/video").path))
        // A live playlist.
        let live = try SimulatedLiveStream(server: server)
        await #expect {
            _ = try await Downloader(url: live.url, directory: directory.file("live")).run()
        } throws: { ($0 as? DownloadError)?.kind == .unsupported && "\($0)".contains("live") }
    }

    @Test("a segment that fails or arrives short names nothing; the next run fetches only what is missing")
    func failures() async throws {
        let server = try LoopbackServer()
        defer { server.stop() }
        let url = try StreamLayouts.serve(.hlsFMP4, on: server)
        let directory = try TemporaryDirectory(prefix: "filmstrip-download")
        defer { directory.remove() }
        let segment = try String(
            contentsOf: StreamLayouts.directory(.hlsFMP4).appendingPathComponent("index.m3u8"), encoding: .utf8
        ).split(separator: "\n").filter { !$0.hasPrefix("#") }[2]
        let failing = "/hlsFMP4/\(segment)"
        var loading = LoadingConfiguration(maximumResponseSize: 256 << 20)
        loading.retry.maximumAttempts = 1
        for fault in [LoopbackServer.Fault.status(404), .truncate(afterBytes: 100)] {
            server.fail(failing, with: [fault])
            await #expect {
                _ = try await Downloader(url: url, directory: directory.file("d"), loading: loading).run()
            } throws: { ($0 as? DownloadError)?.kind == .fetch && "\($0)".contains(failing) }
            #expect(!FileManager.default.fileExists(atPath: directory.file("d/master.m3u8").path))
        }
        server.forgetRequests()
        let journal = try String(contentsOf: directory.file("d/journal"), encoding: .utf8)
        let verifiedBefore = Set(journal.split(separator: "\n").dropFirst().map { String($0.prefix(64)) })
        let download = try await Downloader(url: url, directory: directory.file("d"), loading: loading).run()
        let media = server.requests.map(\.path).filter { !$0.hasSuffix(".m3u8") }
        // Only what was not verified: the failed segment and those not reached; never a file verified before.
        let source = try StreamLayouts.directory(.hlsFMP4)
        let again = try media.filter {
            verifiedBefore.contains(
                Digest.sha256Hex(try Data(contentsOf: source.appendingPathComponent(String($0.dropFirst(9))))))
        }
        #expect(media.contains(failing) && again.isEmpty, "\(media): fetched again \(again)")
        #expect(verifiedBefore.count + Set(media).count == download.files, "\(media), \(verifiedBefore.count)")
        #expect(try download.verify().isEmpty)
        // A stored file changed on disk is found by verify().
        let stored = try FileManager.default.contentsOfDirectory(atPath: directory.file("d/video").path).sorted()
        try Data("x".utf8).write(to: directory.file("d/video/\(stored[1])"))
        #expect(try download.verify() == ["video/\(stored[1])"])
    }

    @Test(
        "protected: the licence stored beside the download, owner-only, and restored offline; without it drm_failed",
        arguments: [ProtectedStreams.Layout.cencDASH, .cbcsHLS])
    func protected(_ layout: ProtectedStreams.Layout) async throws {
        let server = try LoopbackServer()
        defer { server.stop() }
        let url = try ProtectedPlaybackTests.serve(layout, on: server)
        let directory = try TemporaryDirectory(prefix: "filmstrip-download")
        defer { directory.remove() }
        let license = ClearKeyLicense(url: server.url("/license"), timeout: 5, addressPolicy: .any)
        let download = try await Downloader(url: url, directory: directory.file("d"), license: license).run()
        #expect(download.keyIDs.map(ContentKeys.hex) == [ProtectedStreams.keyID])
        let file = try #require(download.licenseFile)
        let attributes = try FileManager.default.attributesOfItem(atPath: file.path)
        #expect((attributes[.posixPermissions] as? NSNumber)?.intValue == 0o600)
        #expect(try download.contentKeys() == ProtectedPlaybackTests.keys)
        #expect(server.requests.filter { $0.path == "/license" }.count == 1)
        // Kept without keys: protected, no licence.
        let bare = try await Downloader(url: url, directory: directory.file("bare")).run()
        #expect(bare.isProtected && bare.licenseFile == nil)
        server.stop()
        let recorder = await Self.play(PlayerConfiguration(with: download))
        #expect(recorder.errors.isEmpty, "\(layout): \(recorder.errors)")
        let wrong = recorder.frames.filter { time, number in
            number.map { abs($0 - Int((time * 25 + 1e-3).rounded(.down))) <= 1 } != true
        }
        #expect(recorder.frames.count >= 40 && wrong.isEmpty, "\(layout): \(wrong.count) of \(recorder.frames.count)")
        let failed = await ProtectedPlaybackTests.play(PlayerConfiguration(with: bare), until: .error)
        #expect(failed.errors.contains { $0.type == .drmFailed } && failed.frames.isEmpty, "\(failed.errors)")
    }

    @Test("a rerun with another choice fetches the new rendition; an EXT-X-GAP segment stays a gap, never fetched")
    func changedChoiceAndGaps() async throws {
        let server = try LoopbackServer()
        defer { server.stop() }
        let url = try StreamLayouts.serve(.hlsVariants, on: server)
        let directory = try TemporaryDirectory(prefix: "filmstrip-download")
        defer { directory.remove() }
        var small = DownloadConfiguration()
        small.maximumHeight = 200
        _ = try await Downloader(url: url, directory: directory.file("d"), configuration: small).run()
        server.forgetRequests()
        let download = try await Downloader(url: url, directory: directory.file("d")).run()
        let media = server.requests.map(\.path).filter { !$0.hasSuffix(".m3u8") }
        // The 320 rendition's segments, none of the audio already stored.
        #expect(!media.isEmpty && media.allSatisfy { $0.hasPrefix("/hlsVariants/v320/") }, "\(media)")
        let source = try StreamLayouts.directory(.hlsVariants)
        #expect(
            try Data(contentsOf: download.directory.appendingPathComponent("video/00001.ts"))
                == Data(contentsOf: source.appendingPathComponent("v320/seg_000.ts")))
        #expect(try download.verify().isEmpty)

        // A gap in a media playlist.
        let text = try String(
            contentsOf: StreamLayouts.directory(.hlsFMP4).appendingPathComponent("index.m3u8"), encoding: .utf8)
        var lines = text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        let third = try #require(lines.indices.filter { lines[$0].hasPrefix("#EXTINF") }.dropFirst(2).first)
        let gapped = lines[third + 1]
        lines.insert("#EXT-X-GAP", at: third)
        _ = try StreamLayouts.serve(.hlsFMP4, on: server)
        server.serve("/hlsFMP4/gap.m3u8", text: lines.joined(separator: "\n"), contentType: "application/x-mpegurl")
        server.forgetRequests()
        let withGap = try await Downloader(url: server.url("/hlsFMP4/gap.m3u8"), directory: directory.file("g")).run()
        #expect(!server.requests.contains { $0.path == "/hlsFMP4/\(gapped)" })
        let local = try String(contentsOf: withGap.directory.appendingPathComponent("video.m3u8"), encoding: .utf8)
        #expect(local.components(separatedBy: "#EXT-X-GAP").count == 2, "\(local)")
        #expect(try withGap.verify().isEmpty)
    }
}
