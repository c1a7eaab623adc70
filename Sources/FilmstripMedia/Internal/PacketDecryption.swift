import CFFmpeg
import FilmstripStreaming
import Foundation

/// Decryption of packets protected with Common Encryption, before they reach a decoder.
enum PacketDecryption {
    /// Decrypts `packet` in place when the demuxer marked it protected (Common Encryption in fMP4: its scheme, key
    /// id, IV and subsamples as side data); false when it is not protected, or not decrypted because no key is
    /// needed (`required` false: sound the caller can do without).
    ///
    /// - Throws: ``MediaError/Kind/protectedContent`` when the packet is protected and there is no key for its key
    ///   id (and `required`), or its scheme is not `cenc` or `cbcs`, or the licence failed
    ///   (``MediaError/Kind/timedOut`` when it came too late); ``MediaError/Kind/invalidMedia`` when its
    ///   encryption details do not fit it.
    static func decrypt(
        _ packet: UnsafeMutablePointer<AVPacket>, keys contentKeys: ContentKeySource?, url: URL, required: Bool
    ) throws(MediaError) -> Bool {
        var size = 0
        guard let side = av_packet_get_side_data(packet, AV_PKT_DATA_ENCRYPTION_INFO, &size) else { return false }
        guard let info = av_encryption_info_get_side_data(side, size) else {
            throw MediaError(.invalidMedia, "unreadable encryption details of a sample", url: url)
        }
        defer { av_encryption_info_free(info) }
        let details = info.pointee
        let kid = Data(bytes: details.key_id, count: Int(details.key_id_size))
        let fourCC =
            String(bytes: (0..<4).map { UInt8(truncatingIfNeeded: details.scheme >> (24 - 8 * $0)) }, encoding: .ascii)
            ?? "?"
        guard let scheme = SampleDecryption.Scheme(rawValue: fourCC) else {
            throw MediaError(
                .protectedContent, "the video is encrypted with the \(fourCC) scheme (only cenc and cbcs are read)",
                url: url)
        }
        let found: Data?
        do {
            found = try contentKeys?.key(for: kid)
        } catch {
            if !required { return false }
            throw MediaError(
                error.kind == .timedOut ? .timedOut : .protectedContent,
                "no key for key id \(ContentKeys.hex(kid)) of the encrypted video: \(error.message)", url: url,
                underlying: error)
        }
        guard let key = found else {
            if !required { return false }
            throw MediaError(
                .protectedContent,
                "the video is encrypted (Common Encryption, \(fourCC), key id \(ContentKeys.hex(kid))) and no key for "
                    + "it was given (a content key, or a licence server: --key KID:KEY or --license-url)", url: url)
        }
        guard av_packet_make_writable(packet) >= 0, let data = packet.pointee.data else {
            throw MediaError(.decodeFailed, "out of memory for a sample", url: url)
        }
        let subsamples = (0..<Int(details.subsample_count)).map { i in
            SampleDecryption.Subsample(
                clear: Int(details.subsamples[i].bytes_of_clear_data),
                protected: Int(details.subsamples[i].bytes_of_protected_data))
        }
        do {
            try SampleDecryption.decrypt(
                UnsafeMutableRawBufferPointer(start: data, count: Int(packet.pointee.size)), scheme: scheme,
                key: key, iv: Array(UnsafeBufferPointer(start: details.iv, count: Int(details.iv_size))),
                subsamples: subsamples, pattern: (Int(details.crypt_byte_block), Int(details.skip_byte_block)))
        } catch {
            throw MediaError(.invalidMedia, "a protected sample cannot be decrypted: \(error.message)", url: url)
        }
        return true
    }
}
