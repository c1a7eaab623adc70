import FilmstripMedia
import FilmstripStreaming
import Foundation

/// A file or progressive http(s) resource opened for playback: its frames (its video with the audio that goes with
/// it, or, when it has no video, its audio alone), its length, whether a decoder was made (not taken over from the
/// previous content), and its audio streams when it has several.
struct OpenedFile {
    var frames: any FrameSource
    var duration: Double
    var audioOnly = false
    var createdDecoder = true
    var audio = FileAudioStreams()

    /// Opens `url`: its video (the decoder of `previous` taken over when the codec parameters match), else its audio
    /// alone (``AudioFileSource``; decoded to a standard format only to advance the timeline when no output hears
    /// it, `sound` is `nil`). Of several audio streams, the one in `preferredLanguage` plays.
    init(
        _ url: URL, options: FrameExtractorConfiguration, reusing previous: VideoDecoder?, sound: AudioFormat?,
        preferredLanguage: String?
    ) throws {
        do {
            let decoder = try VideoDecoder(url: url, options: options, reusing: previous, audio: sound)
            (frames, duration, createdDecoder) = (decoder, decoder.duration, !decoder.reusedDecoder)
            audio = FileAudioStreams(decoder, preferredLanguage: preferredLanguage)
        } catch let error as MediaError where error.kind == .noVideoStream {
            let decoder: AudioFileDecoder
            do {
                decoder = try AudioFileDecoder(url: url, options: options, format: sound ?? .standard)
            } catch let audioError as MediaError where audioError.kind == .noVideoStream {
                throw error
            }
            (frames, duration, audioOnly) = (AudioFileSource(decoder, keepsAudio: sound != nil), decoder.duration, true)
        }
    }
}

/// A file's audio streams, when it has several (known before its frames are read), and the one playing.
struct FileAudioStreams {
    var tracks: [MediaSummary.Audio] = []
    var selected: Int?

    init() {}

    /// The decoder's streams: the one in the preferred language plays, else the one FFmpeg picks.
    init(_ decoder: VideoDecoder, preferredLanguage: String?) {
        let tracks = decoder.audioTracks
        guard tracks.count > 1, decoder.hasAudio || decoder.audioProblem != nil else { return }
        var selected = decoder.selectedAudioTrack
        if let preferredLanguage {
            let matches = tracks.map { track in
                track.language.map { AudioTrackSelection.match($0, preferredLanguage) } ?? .none
            }
            if let best = matches.max(), best != .none, let first = matches.firstIndex(of: best), first != selected {
                decoder.requestAudioTrack(first)
                selected = first
            }
        }
        (self.tracks, self.selected) = (tracks, selected)
    }

    /// The audio tracks as the player lists them, the one playing marked: a stream's own list, else these streams
    /// (empty when there are not several).
    func listed(playing stream: StreamSession?) -> [AudioTrack] {
        if let listed = stream?.audioTracks {
            return listed.tracks.enumerated().map { index, track in
                AudioTrack(track, index: index, selected: index == listed.selected)
            }
        }
        return tracks.enumerated().map { index, track in
            AudioTrack(file: track, index: index, selected: index == selected)
        }
    }
}
