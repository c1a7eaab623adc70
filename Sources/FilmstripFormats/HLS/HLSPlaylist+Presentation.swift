public import Foundation

extension HLSPlaylist {
    /// The playlist as a ``Presentation``: a master's variants become the renditions of one video track (their
    /// segments still to be loaded, ``SegmentIndex/mediaPlaylist(_:)``), each audio rendition with its own playlist an
    /// audio track, I-frame and image streams tracks of their own; a media playlist becomes one track whose segments
    /// are listed.
    public func presentation(url: URL) -> Presentation {
        switch self {
        case .media(let media):
            let kind: Presentation.TrackKind = media.imagesOnly ? .image : media.iFramesOnly ? .iFrame : .video
            let rendition = Presentation.Rendition(
                id: url.absoluteString, bandwidth: 0, segments: .list(media.segmentReferences()))
            return Presentation(
                streamingProtocol: .hls, url: url, isLive: media.isLive, duration: media.isLive ? nil : media.duration,
                periods: [
                    Presentation.Period(
                        id: nil, start: 0, duration: media.isLive ? nil : media.duration,
                        tracks: [
                            Presentation.Track(id: nil, kind: kind, renditions: [rendition])
                        ])
                ],
                minimumUpdatePeriod: media.isLive ? media.targetDuration : nil)
        case .master(let master):
            var tracks: [Presentation.Track] = []
            let video = master.variants.map { variant in
                Presentation.Rendition(
                    id: variant.uri.absoluteString, bandwidth: variant.bandwidth,
                    averageBandwidth: variant.averageBandwidth, codecs: variant.codecs,
                    width: variant.resolution?.width, height: variant.resolution?.height,
                    frameRate: variant.frameRate, segments: .mediaPlaylist(variant.uri))
            }
            if !video.isEmpty { tracks.append(Presentation.Track(id: nil, kind: .video, renditions: video)) }
            for rendition in master.renditions {
                guard let uri = rendition.uri else { continue }  // carried in the variants' own segments
                let kind: Presentation.TrackKind
                switch rendition.type {
                case "AUDIO": kind = .audio
                case "VIDEO": kind = .video
                case "SUBTITLES": kind = .text
                default: continue
                }
                tracks.append(
                    Presentation.Track(
                        id: rendition.groupID, kind: kind, language: rendition.language, name: rendition.name,
                        isDefault: rendition.isDefault, autoselect: rendition.autoselect,
                        renditions: [
                            Presentation.Rendition(
                                id: uri.absoluteString, bandwidth: 0, channels: rendition.channels,
                                segments: .mediaPlaylist(uri))
                        ]))
            }
            // An I-frame image sequence (`CODECS="mjpg"`) is an image track: JPEGs, no video to play fast.
            let videoIFrames = master.iFrameStreams.filter { !$0.isImageSequence }
            let imageSequences = master.iFrameStreams.filter(\.isImageSequence)
            for (streams, kind) in [
                (videoIFrames, Presentation.TrackKind.iFrame), (master.imageStreams, .image), (imageSequences, .image),
            ]
            where !streams.isEmpty {
                tracks.append(
                    Presentation.Track(
                        id: nil, kind: kind,
                        renditions: streams.map { stream in
                            Presentation.Rendition(
                                id: stream.uri.absoluteString, bandwidth: stream.bandwidth, codecs: stream.codecs,
                                width: stream.resolution?.width, height: stream.resolution?.height,
                                segments: .mediaPlaylist(stream.uri))
                        }))
            }
            return Presentation(
                streamingProtocol: .hls, url: url, isLive: false, duration: nil,
                periods: [Presentation.Period(id: nil, start: 0, duration: nil, tracks: tracks)])
        }
    }
}

extension HLSMediaPlaylist {
    /// The segments as references on a timeline that starts at `start` seconds: each begins where the previous one
    /// ends (the sum of the `EXTINF` durations), and each keeps its discontinuity sequence, byte range, map and key.
    public func segmentReferences(startingAt start: Double = 0) -> [SegmentReference] {
        var time = start
        var out: [SegmentReference] = []
        out.reserveCapacity(segments.count)
        for segment in segments {
            out.append(
                SegmentReference(
                    start: time, duration: segment.duration, reference: segment.reference, baseURL: segment.baseURL,
                    byteRange: segment.byteRange,
                    initialization: segment.map.map { InitializationSection(url: $0.uri, byteRange: $0.byteRange) },
                    key: segment.key, discontinuitySequence: segment.discontinuitySequence,
                    number: segment.sequenceNumber, timing: .segmentStart))
            out[out.count - 1].programDateTime = segment.programDateTime
            out[out.count - 1].isGap = segment.gap
            time += segment.duration
        }
        return out
    }
}
