import ArgumentParser
import Filmstrip
import Foundation

/// Exit statuses of the `filmstrip` tool.
enum ExitStatus {
    /// No thumbnail covers the time, or `inspect --check` found problems.
    static let notFound = ExitCode(1)
    /// Bad input: a malformed or unreadable track, a failed fetch, invalid options.
    static let badInput = ExitCode(2)
}

/// Prints `message` on standard error.
func printError(_ message: String) {
    FileHandle.standardError.write(Data(("filmstrip: " + message + "\n").utf8))
}

/// Reports an error from the library on standard error (`line:column: message` for parse errors) and returns the
/// exit code to throw.
func fail(_ error: any Error) -> ExitCode {
    switch error {
    case let error as ThumbnailsError:
        printError(error.description)
    case let error as WebVTTParseError:
        printError("\(error.line):\(error.column): \(error.message)")
    default:
        printError("\(error)")
    }
    return ExitStatus.badInput
}

/// Turns a command-line argument into a URL: http(s) and file URLs as given, anything else as a file path.
func resourceURL(_ argument: String) -> URL {
    if let url = URL(string: argument), let scheme = url.scheme?.lowercased(),
        ["http", "https", "file"].contains(scheme)
    {
        return url
    }
    let cwd = URL(fileURLWithPath: FileManager.default.currentDirectoryPath, isDirectory: true)
    return URL(fileURLWithPath: argument, relativeTo: cwd).standardizedFileURL
}

/// Options shared by the commands that load tracks.
struct CacheOptions: ParsableArguments {
    @Option(
        name: .customLong("cache-dir"),
        help: "Disk cache directory (default: $XDG_CACHE_HOME/filmstrip, else ~/.cache/filmstrip).")
    var cacheDirectory: String?

    var directory: URL {
        cacheDirectory.map { URL(fileURLWithPath: $0, isDirectory: true).standardizedFileURL }
            ?? DiskCache.defaultDirectory
    }
}

/// `--mode` of the commands that generate tracks.
let generationModeHelp =
    "keyframe (one keyframe per thumbnail, fast), accurate (the exact frame at each cue start) or auto (a keyframe "
    + "inside the cue when there is one, else the exact frame)."

/// Parses `--mode`.
@Sendable func generationMode(_ text: String) throws -> PreviewTrackConfiguration.Mode {
    guard let mode = PreviewTrackConfiguration.Mode(rawValue: text) else {
        throw ValidationError("--mode must be keyframe, accurate or auto")
    }
    return mode
}
