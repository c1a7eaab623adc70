public import FilmstripFormats

/// Which audio track a presentation plays (SPEC 4.8), as a value: the preferred language first (a BCP 47 tag,
/// matched exactly, else by its language subtag, with ISO 639-2 codes such as `eng` read as their ISO 639-1
/// equivalents), else the default track (HLS `DEFAULT=YES`, DASH Role `main`), else an `AUTOSELECT` one, else the
/// first. Among tracks of the chosen language the same order breaks ties.
///
/// ```swift
/// let index = AudioTrackSelection.choose(period.tracks.filter { $0.kind == .audio }, preferredLanguage: "fr-CA")
/// ```
public enum AudioTrackSelection {
    /// How well a track's language answers a preferred one.
    public enum LanguageMatch: Int, Sendable, Hashable, Comparable {
        /// Different languages (or one of them unknown).
        case none
        /// The same language subtag (`fr-CA` and `fr`, `en` and `eng`).
        case language
        /// The same tag.
        case exact

        public static func < (a: LanguageMatch, b: LanguageMatch) -> Bool { a.rawValue < b.rawValue }
    }

    /// The index of the track to play among `tracks` (audio tracks), or `nil` when there is none.
    public static func choose(_ tracks: [Presentation.Track], preferredLanguage: String?) -> Int? {
        guard !tracks.isEmpty else { return nil }
        let matches = tracks.map { track -> LanguageMatch in
            guard let preferredLanguage, let language = track.language else { return .none }
            return match(language, preferredLanguage)
        }
        let best = matches.max() ?? .none
        let candidates = tracks.indices.filter { matches[$0] == best }
        return candidates.first { tracks[$0].isDefault } ?? candidates.first { tracks[$0].autoselect }
            ?? candidates.first
    }

    /// How `language` answers `preferred` (both BCP 47 tags, case-insensitive).
    public static func match(_ language: String, _ preferred: String) -> LanguageMatch {
        let a = language.lowercased().replacingOccurrences(of: "_", with: "-")
        let b = preferred.lowercased().replacingOccurrences(of: "_", with: "-")
        guard !a.isEmpty, !b.isEmpty else { return .none }
        if a == b { return .exact }
        return primary(a) == primary(b) ? .language : .none
    }

    /// The language subtag, with ISO 639-2 codes mapped to ISO 639-1 where one exists.
    static func primary(_ tag: String) -> String {
        let subtag = String(tag.prefix { $0 != "-" })
        return twoLetter[subtag] ?? subtag
    }

    /// ISO 639-2 (bibliographic and terminology) codes of common languages and their ISO 639-1 codes.
    private static let twoLetter: [String: String] = [
        "ara": "ar", "bul": "bg", "cat": "ca", "ces": "cs", "cze": "cs", "chi": "zh", "zho": "zh", "dan": "da",
        "deu": "de", "ger": "de", "dut": "nl", "nld": "nl", "ell": "el", "gre": "el", "eng": "en", "est": "et",
        "fin": "fi", "fra": "fr", "fre": "fr", "heb": "he", "hin": "hi", "hrv": "hr", "hun": "hu", "ind": "id",
        "ita": "it", "jpn": "ja", "kor": "ko", "lav": "lv", "lit": "lt", "msa": "ms", "may": "ms", "nor": "no",
        "nob": "nb", "nno": "nn", "pol": "pl", "por": "pt", "ron": "ro", "rum": "ro", "rus": "ru", "slk": "sk",
        "slo": "sk", "slv": "sl", "spa": "es", "srp": "sr", "swe": "sv", "tha": "th", "tur": "tr", "ukr": "uk",
        "vie": "vi", "cym": "cy", "wel": "cy", "gle": "ga", "isl": "is", "ice": "is", "fas": "fa", "per": "fa",
    ]
}
