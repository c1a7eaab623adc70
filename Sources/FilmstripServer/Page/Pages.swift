import FilmstripThumbnails
import Foundation

/// The pages, as HTML text.
enum Pages {
    /// One video on the library page.
    struct LibraryItem {
        var path: String
        var name: String
        var duration: Double?
    }

    private static func document(title: String, body: String) -> String {
        """
        <!doctype html>
        <html lang="en">
        <head>
        <meta charset="utf-8">
        <meta name="viewport" content="width=device-width, initial-scale=1">
        <title>\(HTML.escape(title))</title>
        <style>\(PageAssets.style)</style>
        </head>
        <body>
        \(body)
        </body>
        </html>

        """
    }

    /// The top bar; `home` is the library's link (none on a page opened from disk).
    private static func header(_ subtitle: String, home: Bool = true) -> String {
        let title = home ? "<a href=\"/\">Filmstrip</a>" : "<span class=\"brand\">Filmstrip</span>"
        return "<header>\(title)<span class=\"where\">\(HTML.escape(subtitle))</span></header>"
    }

    /// The library: every video with its poster, name and duration.
    static func library(_ items: [LibraryItem], folders: [String]) -> String {
        var body = header(folders.joined(separator: " · ")) + "\n<main>\n"
        if items.isEmpty {
            body += "<p class=\"empty\">No videos in \(HTML.escape(folders.joined(separator: ", "))).</p>\n"
        } else {
            body += "<ul class=\"library\" id=\"library\">\n"
            for item in items {
                let src = HTML.component(item.path)
                let poster = item.duration.map { min($0 * 0.1, 30) } ?? 0
                body += """
                    <li><a class="video" href="/watch/\(HTML.path(item.path))" data-path="\(HTML.escape(item.path))">\
                    <img class="poster" loading="lazy" alt="" src="/api/thumbnail?src=\(src)&amp;t=\
                    \(String(format: "%.3f", poster))">\
                    <span class="meta"><span class="name">\(HTML.escape(item.name))</span>\
                    <span class="duration" data-seconds="\(item.duration.map { String(format: "%.3f", $0) } ?? "")">\
                    \(item.duration.map(HTML.duration) ?? "–")</span></span></a></li>

                    """
            }
            body += "</ul>\n"
        }
        body += "</main>"
        return document(title: "Filmstrip library", body: body)
    }

    /// A watch page. `config` is what the script reads: `duration`, and either `track` (inline cues) or
    /// `trackURL` and `progressURL`.
    static func watch(
        title: String, subtitle: String, videoURL: String?, config: [String: Any], poster: String? = nil,
        hint: String = "", home: Bool = true
    ) -> String {
        let source = videoURL.map { " src=\"\(HTML.escape($0))\"" } ?? ""
        let posterAttribute = poster.map { " poster=\"\(HTML.escape($0))\"" } ?? ""
        let body = """
            \(header(subtitle, home: home))
            <main>
            <h1>\(HTML.escape(title))</h1>
            <div class="player">
            <video id="video"\(source)\(posterAttribute) preload="metadata" playsinline></video>
            <div class="controls">
            <button id="play" type="button" aria-label="Play">▶</button>
            <div id="scrubber" role="slider" tabindex="0" aria-label="Seek" aria-valuemin="0" aria-valuemax="0" \
            aria-valuenow="0">
            <div class="rail"></div><div class="played"></div><div class="handle"></div>
            <div id="preview-bubble" hidden><div id="preview"></div><div id="preview-time">0:00</div></div>
            </div>
            <span id="clock">0:00</span>
            <div class="status" id="track-status" data-state="pending"><progress max="1" value="0"></progress>\
            <span class="text"></span></div>
            </div>
            </div>
            \(hint.isEmpty ? "" : "<p class=\"hint\">\(hint)</p>")
            </main>
            <script type="application/json" id="filmstrip-config">\(HTML.scriptJSON(config))</script>
            <script>\(PageAssets.script)</script>
            """
        return document(title: title, body: body)
    }

    /// The JSON of a track's cues, with image URLs made by `imageURL` from the image index.
    static func trackObject(_ track: PreparedTrack, duration: Double?, imageURL: (Int) -> String) -> [String: Any] {
        let images = (0..<track.imageCount).map(imageURL)
        let cues: [[String: Any]] = track.placements.map { placement in
            var cue: [String: Any] = ["start": placement.start, "end": placement.end, "image": images[placement.image]]
            if let r = placement.region {
                cue["region"] = ["x": r.x, "y": r.y, "w": r.width, "h": r.height]
            } else {
                cue["region"] = NSNull()
            }
            return cue
        }
        var object: [String: Any] = ["origin": track.origin, "cues": cues, "images": images]
        if let duration, duration.isFinite { object["duration"] = duration }
        return object
    }
}
