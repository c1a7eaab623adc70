import ArgumentParser
import Filmstrip
import Foundation

/// `--key KID:KEY`, for commands that read video protected with Common Encryption.
struct KeyOptions: ParsableArguments {
    @Option(
        name: .customLong("key"),
        help: ArgumentHelp(
            "A content key for video protected with Common Encryption (cenc or cbcs in fMP4): KID:KEY, each 32 "
                + "hexadecimal digits (repeatable). Keys stay in memory.", valueName: "KID:KEY"))
    var pairs: [String] = []

    @Option(
        name: .customLong("license-url"),
        help: ArgumentHelp(
            "A W3C ClearKey licence server, asked for the keys of key ids no --key gives.", valueName: "URL"))
    var licenseURL: String?

    @Option(name: .customLong("license-timeout"), help: "Seconds a licence request may take.")
    var licenseTimeout: Double = 10

    func validate() throws {
        if let licenseURL {
            guard let url = URL(string: licenseURL), ["http", "https"].contains(url.scheme?.lowercased() ?? "") else {
                throw ValidationError("--license-url must be an http or https URL")
            }
        }
        guard licenseTimeout > 0, licenseTimeout <= 600 else {
            throw ValidationError("--license-timeout must be above 0 and at most 600 seconds")
        }
        do {
            _ = try ContentKeys(pairs: pairs)
        } catch {
            throw ValidationError(error.message)
        }
    }

    /// The keys given.
    var keys: ContentKeys { (try? ContentKeys(pairs: pairs)) ?? ContentKeys() }

    /// The licence server given, under `policy`.
    func license(policy: AddressPolicy) -> ClearKeyLicense? {
        guard let licenseURL, let url = URL(string: licenseURL) else { return nil }
        return ClearKeyLicense(url: url, timeout: licenseTimeout, addressPolicy: policy)
    }
}
