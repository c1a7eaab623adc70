import FilmstripFormats
import FilmstripMedia

/// An audio track a stream or file offers (``Player/audioTracks``): an HLS `EXT-X-MEDIA TYPE=AUDIO` rendition group
/// member, a DASH audio AdaptationSet, or one of a file's audio streams (an MKV or MP4 with two languages).
public struct AudioTrack: Sendable, Hashable {
    /// Its position in ``Player/audioTracks`` (what ``Player/selectAudioTrack(_:)`` uses).
    public var index: Int
    /// The HLS group id or the DASH AdaptationSet id.
    public var id: String?
    /// BCP 47 language tag (HLS `LANGUAGE`, DASH `lang`).
    public var language: String?
    /// A human name (HLS `NAME`, DASH `Label`).
    public var name: String?
    /// DASH `Role` values.
    public var roles: [String]
    /// HLS `DEFAULT=YES` or DASH Role `main`.
    public var isDefault: Bool
    /// HLS `AUTOSELECT=YES`.
    public var autoselect: Bool
    /// HLS `CHANNELS` or DASH `AudioChannelConfiguration`, as given.
    public var channels: String?
    /// The codecs, when given.
    public var codecs: String?
    /// Whether it is the track playing.
    public var isSelected: Bool

    init(_ track: Presentation.Track, index: Int, selected: Bool) {
        self.index = index
        id = track.id
        language = track.language
        name = track.name
        roles = track.roles
        isDefault = track.isDefault
        autoselect = track.autoselect
        let rendition = track.renditions.max { $0.bandwidth < $1.bandwidth }
        channels = rendition?.channels
        codecs = rendition?.codecs
        isSelected = selected
    }

    /// One of a file's audio streams (a film with two languages has two).
    init(file track: MediaSummary.Audio, index: Int, selected: Bool) {
        self.index = index
        id = nil
        language = track.language
        name = nil
        roles = []
        isDefault = index == 0
        autoselect = true
        channels = String(track.channels)
        codecs = track.codec
        isSelected = selected
    }
}

extension Player {
    /// The audio tracks of the stream or file loaded (empty for muxed stream audio, a file of one audio stream, and
    /// before the content is open), with the one playing marked. The first choice follows
    /// ``PlayerConfiguration/preferredAudioLanguage``.
    public var audioTracks: [AudioTrack] { shared.withLock { $0.audioTracks } }

    /// Plays `track` from the playhead on (what was buffered of the previous track is dropped). ``onAudioTracks``
    /// reports the change.
    public func selectAudioTrack(_ track: AudioTrack) { send(.selectAudio(track.index)) }

    /// Called with ``audioTracks`` when a stream opens and when the track playing changes (on the engine thread).
    public var onAudioTracks: (@Sendable ([AudioTrack]) -> Void)? {
        get { shared.withLock { $0.callbacks.onAudioTracks } }
        set { shared.withLock { $0.callbacks.onAudioTracks = newValue } }
    }
}
