import FilmstripMedia
import FilmstripStreaming
import Foundation

extension PlayerConfiguration {
    /// Where a stream session's protected samples get their keys: ``contentKeys``, then the licence server. Always
    /// made (empty without keys or licence), so that the licence server the manifest names can be adopted.
    func keySource(network: NetworkConfiguration, prepare: LicenseRequestPreparation?) -> ContentKeySource {
        ContentKeySource(keys: contentKeys, license: license(network: network, prepare: prepare))
    }

    /// A file's keys: ``contentKeys`` and the licence server, set on the frames engine's `options`.
    func applyKeys(
        to options: inout FrameExtractorConfiguration, network: NetworkConfiguration,
        prepare: LicenseRequestPreparation?
    ) {
        options.contentKeys = contentKeys
        options.license = license(network: network, prepare: prepare)
    }

    /// ``licenseURL``'s server, as ``license(_:network:prepare:)`` makes it; `nil` without one.
    func license(network: NetworkConfiguration, prepare: LicenseRequestPreparation?) -> ClearKeyLicense? {
        licenseURL.map { Self.license($0, network: network, prepare: prepare) }
    }

    /// The licence server at `url` under `network`'s headers, address policy and licence timeout (10 s when unset),
    /// its requests signed by `prepare` (``Player/prepareLicenseRequest``).
    static func license(
        _ url: URL, network: NetworkConfiguration, prepare: LicenseRequestPreparation?
    ) -> ClearKeyLicense {
        ClearKeyLicense(
            url: url, headers: network.httpAdditionalHeaders ?? [:],
            timeout: network.timeoutIntervalForDrmAcquisitionMs.map { Double(max(1, $0)) / 1000 } ?? 10,
            addressPolicy: network.addressPolicy ?? .any, prepare: prepare)
    }
}
