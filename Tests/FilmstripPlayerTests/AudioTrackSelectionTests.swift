import FilmstripFormats
import FilmstripStreaming
import Testing

@Suite("Audio track selection")
struct AudioTrackSelectionTests {
    private static func track(
        _ language: String?, isDefault: Bool = false, autoselect: Bool = false, name: String = ""
    ) -> Presentation.Track {
        Presentation.Track(
            id: "aud", kind: .audio, language: language, name: name, isDefault: isDefault, autoselect: autoselect,
            renditions: [])
    }

    @Test("language tags: exact, by language subtag, ISO 639-2 read as 639-1, case and underscores ignored")
    func matching() {
        typealias S = AudioTrackSelection
        #expect(S.match("fr-CA", "fr-ca") == .exact)
        #expect(S.match("fr", "fr-CA") == .language)
        #expect(S.match("fra", "fr") == .language && S.match("fre", "fr-FR") == .language)
        #expect(S.match("eng", "en_GB") == .language)
        #expect(S.match("en", "fr") == .none && S.match("", "en") == .none)
        #expect(S.match("zh-Hant", "zho") == .language)
    }

    @Test("the preferred language first; then DEFAULT, then AUTOSELECT, then the first; ties broken the same way")
    func choice() {
        let tracks = [
            Self.track("eng", autoselect: true, name: "English"),
            Self.track("fra", isDefault: true, name: "Français"),
            Self.track("fr-CA", autoselect: true, name: "Québécois"),
            Self.track("de", name: "Deutsch"),
        ]
        #expect(AudioTrackSelection.choose(tracks, preferredLanguage: "en-US") == 0)
        #expect(AudioTrackSelection.choose(tracks, preferredLanguage: "fr-CA") == 2, "the exact tag wins")
        #expect(AudioTrackSelection.choose(tracks, preferredLanguage: "fr") == 1, "two French: the default one")
        #expect(AudioTrackSelection.choose(tracks, preferredLanguage: "deu") == 3)
        #expect(AudioTrackSelection.choose(tracks, preferredLanguage: "ja") == 1, "no Japanese: the default")
        #expect(AudioTrackSelection.choose(tracks, preferredLanguage: nil) == 1)
        let noDefault = [Self.track("en"), Self.track("es", autoselect: true)]
        #expect(AudioTrackSelection.choose(noDefault, preferredLanguage: "it") == 1, "no default: AUTOSELECT")
        #expect(AudioTrackSelection.choose([Self.track(nil), Self.track(nil)], preferredLanguage: "en") == 0)
        #expect(AudioTrackSelection.choose([], preferredLanguage: "en") == nil)
    }
}
