import ArgumentParser
import Filmstrip

/// `--key KID:KEY`, for commands that read video protected with Common Encryption.
struct KeyOptions: ParsableArguments {
    @Option(
        name: .customLong("key"),
        help: ArgumentHelp(
            "A content key for video protected with Common Encryption (cenc or cbcs in fMP4): KID:KEY, each 32 "
                + "hexadecimal digits (repeatable). Keys stay in memory.", valueName: "KID:KEY"))
    var pairs: [String] = []

    func validate() throws {
        do {
            _ = try ContentKeys(pairs: pairs)
        } catch {
            throw ValidationError(error.message)
        }
    }

    /// The keys given.
    var keys: ContentKeys { (try? ContentKeys(pairs: pairs)) ?? ContentKeys() }
}
