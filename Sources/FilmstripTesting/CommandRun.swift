import Foundation

/// A command run to its end (found on the `PATH`): its exit status and what it wrote, standard output and standard
/// error together.
public struct CommandRun: Sendable {
    public let status: Int32
    public let output: String

    /// Runs `arguments` (the command first) and waits for it.
    public init(_ arguments: [String]) throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = arguments
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = pipe
        try process.run()
        output = String(decoding: pipe.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        status = process.terminationStatus
    }
}
