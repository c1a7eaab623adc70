import Crypto
import Foundation

/// The page's script and style, compiled into the binary. Every page carries them inline, so the server, the
/// page written to disk and the tests all run the same code, and a page never asks another host for anything.
enum PageAssets {
    /// The `Content-Security-Policy` of served pages: inline script and style only by their hashes, everything
    /// else from this server only.
    static let contentSecurityPolicy =
        "default-src 'none'; script-src '\(hash(script))'; style-src '\(hash(style))'; img-src 'self'; "
        + "media-src 'self'; connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"

    private static func hash(_ text: String) -> String {
        "sha256-" + Data(SHA256.hash(data: Data(text.utf8))).base64EncodedString()
    }

    static let style = """
        :root { color-scheme: dark; --accent: #4da3ff; --bg: #101216; --card: #1b1e24; --muted: #9aa3ad; }
        * { box-sizing: border-box; }
        body { margin: 0; font: 15px/1.4 system-ui, sans-serif; background: var(--bg); color: #e8ebef; }
        header { padding: 14px 24px; border-bottom: 1px solid #262a31; display: flex; gap: 16px; align-items: baseline; }
        header a, header .brand { color: inherit; text-decoration: none; font-weight: 600; }
        header .where { color: var(--muted); font-size: 13px; overflow-wrap: anywhere; }
        main { padding: 24px; max-width: 1100px; margin: 0 auto; }
        .library { display: grid; grid-template-columns: repeat(auto-fill, minmax(220px, 1fr)); gap: 18px;
          list-style: none; padding: 0; margin: 0; }
        .library a { display: block; background: var(--card); border-radius: 8px; overflow: hidden; color: inherit;
          text-decoration: none; }
        .library a:hover, .library a:focus-visible { outline: 2px solid var(--accent); }
        .library img { display: block; width: 100%; aspect-ratio: 16 / 9; object-fit: cover; background: #000; }
        .library .meta { display: flex; justify-content: space-between; gap: 8px; padding: 8px 10px; }
        .library .name { overflow-wrap: anywhere; }
        .library .duration { color: var(--muted); font-variant-numeric: tabular-nums; white-space: nowrap; }
        .empty { color: var(--muted); }
        h1 { font-size: 20px; margin: 0 0 14px; overflow-wrap: anywhere; }
        .player { background: #000; border-radius: 8px; overflow: visible; }
        #video { display: block; width: 100%; max-height: 62vh; aspect-ratio: 16 / 9; background: #000;
          border-radius: 8px 8px 0 0; }
        .controls { display: flex; flex-wrap: wrap; align-items: center; gap: 12px; padding: 12px 14px;
          background: var(--card); border-radius: 0 0 8px 8px; }
        #play { width: 34px; height: 30px; border: 0; border-radius: 6px; background: #2a2f37; color: #fff;
          cursor: pointer; font-size: 14px; }
        #play:focus-visible { outline: 2px solid var(--accent); }
        #clock { color: var(--muted); font-variant-numeric: tabular-nums; font-size: 13px; min-width: 84px;
          text-align: right; }
        #scrubber { position: relative; flex: 1; height: 22px; cursor: pointer; touch-action: none; outline: none; }
        #scrubber .rail { position: absolute; left: 0; right: 0; top: 9px; height: 4px; background: #3a3f48;
          border-radius: 2px; }
        #scrubber .played { position: absolute; left: 0; top: 9px; height: 4px; width: 0; background: var(--accent);
          border-radius: 2px; }
        #scrubber .handle { position: absolute; top: 5px; width: 12px; height: 12px; margin-left: -6px;
          border-radius: 50%; background: #fff; }
        #scrubber:focus-visible .rail { outline: 2px solid var(--accent); outline-offset: 4px; }
        #preview-bubble { position: absolute; bottom: 30px; left: 0; padding: 3px; background: #000;
          border: 1px solid #444; border-radius: 6px; pointer-events: none; z-index: 2; }
        #preview-bubble[hidden] { display: none; }
        #preview { display: block; width: 160px; height: 90px; background-repeat: no-repeat; background-color: #222; }
        #preview[hidden] { display: none; }
        #preview-time { text-align: center; font-variant-numeric: tabular-nums; font-size: 13px; padding-top: 2px; }
        .status { display: flex; flex-basis: 100%; gap: 10px; align-items: center; color: var(--muted);
          font-size: 13px; }
        .status progress { width: 160px; }
        .status[data-state="ready"] progress, .status[data-state="failed"] progress { display: none; }
        .status[data-state="failed"] { color: #ff8a80; }
        .hint { color: var(--muted); font-size: 13px; margin-top: 18px; }
        """

    static let script = """
        (() => {
          "use strict";
          const config = JSON.parse(document.getElementById("filmstrip-config").textContent);
          const video = document.getElementById("video");
          const scrubber = document.getElementById("scrubber");
          const played = scrubber.querySelector(".played");
          const handle = scrubber.querySelector(".handle");
          const bubble = document.getElementById("preview-bubble");
          const preview = document.getElementById("preview");
          const label = document.getElementById("preview-time");
          const status = document.getElementById("track-status");
          const play = document.getElementById("play");
          const clock = document.getElementById("clock");
          const statusText = status.querySelector(".text");
          const bar = status.querySelector("progress");
          const state = { cues: [], progress: [], origin: null };
          window.filmstrip = state;
          let dragging = false;
          let keyTimer = 0;

          const two = (n) => String(n).padStart(2, "0");
          function format(t) {
            t = Math.max(0, Math.floor(t));
            const h = Math.floor(t / 3600), m = Math.floor(t / 60) % 60, s = t % 60;
            return (h ? h + ":" + two(m) : String(m)) + ":" + two(s);
          }
          function total() {
            if (isFinite(video.duration) && video.duration > 0) return video.duration;
            if (config.duration > 0) return config.duration;
            const cues = state.cues;
            return cues.length ? cues[cues.length - 1].end : 0;
          }
          // The cue whose [start, end) holds t (the last cue also holds its end, and nothing after it).
          function cueAt(t) {
            const cues = state.cues;
            let lo = 0, hi = cues.length - 1, found = -1;
            while (lo <= hi) {
              const mid = (lo + hi) >> 1;
              if (cues[mid].start <= t) { found = mid; lo = mid + 1; } else { hi = mid - 1; }
            }
            if (found < 0) return null;
            const cue = cues[found];
            return t < cue.end || (found === cues.length - 1 && t <= cue.end) ? cue : null;
          }
          function timeAt(clientX) {
            const r = scrubber.getBoundingClientRect();
            return Math.min(1, Math.max(0, (clientX - r.left) / r.width)) * total();
          }
          function show(t) {
            label.textContent = format(t);
            label.dataset.seconds = t.toFixed(3);
            const cue = cueAt(t);
            if (cue) {
              const r = cue.region;
              preview.style.backgroundImage = 'url("' + cue.image.replace(/["\\\\]/g, "\\\\$&") + '")';
              if (r) {
                preview.style.width = r.w + "px";
                preview.style.height = r.h + "px";
                preview.style.backgroundPosition = -r.x + "px " + -r.y + "px";
                preview.style.backgroundSize = "auto";
              } else {
                preview.style.width = "160px";
                preview.style.height = "90px";
                preview.style.backgroundPosition = "center";
                preview.style.backgroundSize = "contain";
              }
              preview.dataset.start = cue.start;
              preview.dataset.end = cue.end;
              preview.hidden = false;
            } else {
              preview.hidden = true;
            }
            bubble.hidden = false;
            const d = total(), width = bubble.offsetWidth, rail = scrubber.clientWidth;
            const x = d > 0 ? (t / d) * rail : 0;
            bubble.style.left = Math.min(Math.max(0, x - width / 2), Math.max(0, rail - width)) + "px";
          }
          function hide() { if (!dragging) bubble.hidden = true; }
          function render(t) {
            const d = total(), f = d > 0 ? Math.min(1, Math.max(0, t / d)) : 0;
            played.style.width = f * 100 + "%";
            handle.style.left = f * 100 + "%";
            scrubber.setAttribute("aria-valuenow", t.toFixed(1));
            scrubber.setAttribute("aria-valuemax", d.toFixed(1));
            scrubber.setAttribute("aria-valuetext", format(t));
            clock.textContent = format(t) + " / " + format(d);
          }
          function seek(t) {
            const d = total();
            t = Math.min(Math.max(0, t), d > 0 ? d : t);
            video.currentTime = t;
            render(t);
            return t;
          }

          scrubber.addEventListener("pointerenter", (e) => show(timeAt(e.clientX)));
          scrubber.addEventListener("pointermove", (e) => { if (!dragging) show(timeAt(e.clientX)); });
          scrubber.addEventListener("pointerleave", hide);
          scrubber.addEventListener("pointerdown", (e) => {
            if (e.button !== 0) return;
            dragging = true;
            scrubber.setPointerCapture(e.pointerId);
            scrubber.focus();
            show(timeAt(e.clientX));
            e.preventDefault();
          });
          // A drag is followed and ended on the window, where its events arrive whether or not the scrubber kept
          // the pointer captured, so it can never be left hanging.
          window.addEventListener("pointermove", (e) => { if (dragging) show(timeAt(e.clientX)); });
          window.addEventListener("pointerup", (e) => {
            if (!dragging) return;
            dragging = false;
            seek(timeAt(e.clientX));
            if (e.pointerType !== "mouse") hide();
          });
          window.addEventListener("pointercancel", () => { if (dragging) { dragging = false; hide(); } });
          scrubber.addEventListener("keydown", (e) => {
            if (e.altKey || e.ctrlKey || e.metaKey) return;
            const steps = { ArrowRight: 5, ArrowLeft: -5, ArrowUp: 10, ArrowDown: -10, PageUp: 60, PageDown: -60 };
            let t;
            if (e.key in steps) t = video.currentTime + (e.shiftKey ? Math.sign(steps[e.key]) : steps[e.key]);
            else if (e.key === "Home") t = 0;
            else if (e.key === "End") t = total();
            else return;
            e.preventDefault();
            show(seek(t));
            clearTimeout(keyTimer);
            keyTimer = setTimeout(hide, 1500);
          });
          play.addEventListener("click", () => { if (video.paused) video.play(); else video.pause(); });
          video.addEventListener("play", () => { play.textContent = "❚❚"; play.setAttribute("aria-label", "Pause"); });
          video.addEventListener("pause", () => { play.textContent = "▶"; play.setAttribute("aria-label", "Play"); });
          video.addEventListener("timeupdate", () => { if (!dragging) render(video.currentTime); });
          video.addEventListener("loadedmetadata", () => render(video.currentTime));

          function setStatus(kind, text, fraction) {
            status.dataset.state = kind;
            statusText.textContent = text;
            if (fraction !== undefined) bar.value = fraction;
          }
          function install(track) {
            state.cues = track.cues;
            state.origin = track.origin || null;
            if (!(config.duration > 0) && track.duration > 0) config.duration = track.duration;
            scrubber.classList.add("ready");
            const count = track.cues.length === 1 ? "1 preview" : track.cues.length + " previews";
            setStatus("ready", count + (track.origin ? " (" + track.origin + ")" : ""));
            // Sheets load ahead, a few: a track with one image per cue loads the rest as the pointer needs them.
            const seen = new Set();
            for (const cue of track.cues) {
              if (seen.size >= 8) break;
              if (seen.has(cue.image)) continue;
              seen.add(cue.image);
              new Image().src = cue.image;
            }
            render(video.currentTime || 0);
          }
          function fail(message) { setStatus("failed", "No previews: " + message); }

          if (config.track) {
            install(config.track);
          } else {
            setStatus("pending", "Preparing previews…", 0);
            const events = new EventSource(config.progressURL);
            events.addEventListener("progress", (e) => {
              const p = JSON.parse(e.data);
              state.progress.push(p.fraction);
              setStatus("generating", "Generating previews… " + Math.round(p.fraction * 100) + "%", p.fraction);
            });
            events.addEventListener("ready", () => {
              events.close();
              fetch(config.trackURL)
                .then((r) => (r.ok ? r.json() : r.text().then((t) => Promise.reject(new Error(t)))))
                .then(install, (error) => fail(error.message));
            });
            events.addEventListener("failed", (e) => { events.close(); fail(JSON.parse(e.data).message); });
            events.onerror = () => { if (events.readyState === EventSource.CLOSED) fail("the server closed the stream"); };
          }
          render(0);
        })();
        """
}
