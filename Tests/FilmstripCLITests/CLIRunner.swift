import Foundation
import Testing

/// The result of running the `filmstrip` executable.
struct CLIResult {
    var status: Int32
    var stdout: String
    var stderr: String

    /// The standard output parsed as one JSON object.
    func json() throws -> [String: Any] {
        let object = try JSONSerialization.jsonObject(with: Data(stdout.utf8))
        return try #require(object as? [String: Any])
    }
}

/// Runs the `filmstrip` binary built beside the test bundle.
func filmstrip(_ arguments: String..., environment: [String: String] = [:]) async throws -> CLIResult {
    try await filmstripArguments(arguments, environment: environment)
}

/// Runs the `filmstrip` binary with an argument array.
func filmstripArguments(_ arguments: [String], environment: [String: String] = [:]) async throws -> CLIResult {
    let directory = FileManager.default.temporaryDirectory.appendingPathComponent("filmstrip-cli-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: directory) }
    let out = directory.appendingPathComponent("stdout")
    let err = directory.appendingPathComponent("stderr")
    _ = FileManager.default.createFile(atPath: out.path, contents: nil)
    _ = FileManager.default.createFile(atPath: err.path, contents: nil)
    let process = Process()
    process.executableURL = try cliExecutable()
    process.arguments = arguments
    var env = ProcessInfo.processInfo.environment
    for (key, value) in environment { env[key] = value }
    process.environment = env
    process.standardOutput = try FileHandle(forWritingTo: out)
    process.standardError = try FileHandle(forWritingTo: err)
    let status: Int32 = try await withCheckedThrowingContinuation { continuation in
        process.terminationHandler = { continuation.resume(returning: $0.terminationStatus) }
        do { try process.run() } catch { continuation.resume(throwing: error) }
    }
    return CLIResult(
        status: status, stdout: try String(contentsOf: out, encoding: .utf8),
        stderr: try String(contentsOf: err, encoding: .utf8))
}

/// The `filmstrip` executable: `FILMSTRIP_CLI` when set (`make test` runs these tests on the release build, as users
/// run it; `make asan` on an AddressSanitizer build), else the one built beside the test bundle.
func cliExecutable() throws -> URL {
    if let path = ProcessInfo.processInfo.environment["FILMSTRIP_CLI"], !path.isEmpty {
        guard FileManager.default.isExecutableFile(atPath: path) else { throw CLIMissing(searched: [path]) }
        return URL(fileURLWithPath: path)
    }
    // Tests run from <build>/debug/<Package>PackageTests.xctest; the executable sits beside it.
    let candidates = [
        URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent(),
        Bundle.main.bundleURL.deletingLastPathComponent(),
        Bundle.main.bundleURL,
    ]
    for directory in candidates {
        let file = directory.appendingPathComponent("filmstrip")
        if FileManager.default.isExecutableFile(atPath: file.path) { return file }
    }
    throw CLIMissing(searched: candidates.map(\.path))
}

struct CLIMissing: Error, CustomStringConvertible {
    var searched: [String]
    var description: String { "the filmstrip executable was not found in \(searched)" }
}
