"""The real players of the interop tests: the built bundles kept in `players/` (see its README for versions, origins
and licences), a static HTTP server for a test's folder, and headless Chromium driving the players' own thumbnail
APIs. Each player answer comes back with the pixels it names: the region of the sheet drawn on a canvas, as an app
would show it, reduced to its mean grey (the test videos are grey ramps whose luma encodes the time)."""
import functools
import glob
import http.server
import json
import os
import re
import shutil
import socketserver
import threading
import time
import urllib.parse

HERE = os.path.dirname(os.path.abspath(__file__))
PLAYERS_DIR = os.environ.get("FILMSTRIP_PLAYERS_DIR") or os.path.join(HERE, "players")


def bundles():
    """[(kind, label, file name)] of every bundle kept: Shaka Player builds and dash.js builds."""
    found = []
    for path in sorted(glob.glob(os.path.join(PLAYERS_DIR, "*.js"))):
        name = os.path.basename(path)
        if name.startswith("shaka-player"):
            found.append(("shaka", "Shaka Player " + version_of(path, r"v\d+\.\d+\.\d+[-0-9a-z]*"), name))
        elif name.startswith("dash.all"):
            found.append(("dashjs", "dash.js " + version_of(path, r'"\d+\.\d+\.\d+"').strip('"'), name))
    return found


def version_of(path, pattern):
    with open(path, encoding="utf-8", errors="replace") as f:
        text = f.read()
    if "dash.all" in path:
        match = re.search(r'const \w+="(\d+\.\d+\.\d+)";function \w+\(\)\{return \w+\}', text)
        return match.group(1) if match else os.path.basename(path)
    matches = re.findall(pattern, text)
    return max(set(matches), key=matches.count) if matches else os.path.basename(path)


class Site:
    """A threaded static server on 127.0.0.1: `root` at `/`, the player bundles at `/players/`, and `/page/NAME` an
    empty page with one `<video>` and bundle NAME loaded. Every request path is logged, and the bytes of each body
    sent (`sent`: path, range header, bytes). `delay` seconds are added before each answer (a link's round trip);
    with `rate` (bytes a second) bodies are sent no faster (a link's bandwidth)."""

    def __init__(self, root, delay=0.0, rate=None):
        self.root = root
        self.log = []
        self.sent = []
        # Every body byte written, counted as it goes (a client that hangs up mid-body has read what was sent).
        self.bytes_out = 0
        site = self

        def send(out, data):
            for start in range(0, len(data), 16384):
                chunk = data[start:start + 16384]
                out.write(chunk)
                site.bytes_out += len(chunk)
                if rate:
                    time.sleep(len(chunk) / rate)

        class Handler(http.server.SimpleHTTPRequestHandler):
            def translate_path(self, path):
                clean = urllib.parse.unquote(urllib.parse.urlsplit(path).path)
                if clean.startswith("/players/"):
                    return os.path.join(PLAYERS_DIR, os.path.basename(clean))
                return super().translate_path(path)

            def do_GET(self):
                site.log.append(self.path)
                if delay:
                    time.sleep(delay)
                if self.path.startswith("/page/"):
                    name = os.path.basename(self.path)
                    body = ("<!doctype html><meta charset=utf-8><title>interop</title>"
                            "<video id=v muted playsinline width=320 height=180></video>"
                            f"<script src=\"/players/{name}\"></script>").encode()
                    self.send_response(200)
                    self.send_header("Content-Type", "text/html")
                    self.send_header("Content-Length", str(len(body)))
                    self.end_headers()
                    self.wfile.write(body)
                    return
                requested = re.fullmatch(r"bytes=(\d+)-(\d*)", self.headers.get("Range", ""))
                path = self.translate_path(self.path)
                if requested and os.path.isfile(path):
                    # One byte range, as players ask for EXT-X-BYTERANGE entries (the stdlib server has none).
                    with open(path, "rb") as f:
                        data = f.read()
                    first = int(requested.group(1))
                    last = min(int(requested.group(2) or len(data) - 1), len(data) - 1)
                    if first > last:
                        self.send_error(416)
                        return
                    self.send_response(206)
                    self.send_header("Content-Type", self.guess_type(path))
                    self.send_header("Content-Range", f"bytes {first}-{last}/{len(data)}")
                    self.send_header("Content-Length", str(last - first + 1))
                    self.end_headers()
                    send(self.wfile, data[first:last + 1])
                    site.sent.append((self.path, self.headers.get("Range"), last - first + 1))
                    return
                super().do_GET()
                path = self.translate_path(self.path)
                if os.path.isfile(path):
                    site.sent.append((self.path, None, os.path.getsize(path)))

            def copyfile(self, source, outputfile):
                send(outputfile, source.read())

            def end_headers(self):
                self.send_header("Cache-Control", "no-store")
                super().end_headers()

            def log_message(self, *args):
                pass

        Handler.extensions_map = {**http.server.SimpleHTTPRequestHandler.extensions_map, ".mpd": "application/dash+xml",
                                  ".m3u8": "application/vnd.apple.mpegurl", ".m4s": "video/iso.segment",
                                  ".vtt": "text/vtt", ".ts": "video/mp2t"}

        class Server(socketserver.ThreadingMixIn, http.server.HTTPServer):
            daemon_threads = True

            def handle_error(self, request, client_address):
                pass  # a player that cancels a request closes its connection: not the test's concern

        self.server = Server(("127.0.0.1", 0), functools.partial(Handler, directory=root))
        self.port = self.server.server_address[1]
        self.url = f"http://127.0.0.1:{self.port}/"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def stop(self):
        self.server.shutdown()
        self.server.server_close()


def chromium():
    from selenium import webdriver
    from selenium.webdriver.chrome.options import Options
    from selenium.webdriver.chrome.service import Service
    options = Options()
    for argument in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--window-size=800,600",
                     "--autoplay-policy=no-user-gesture-required", "--mute-audio"):
        options.add_argument(argument)
    if shutil.which("chromium"):
        options.binary_location = shutil.which("chromium")
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    driver_path = shutil.which("chromedriver")
    driver = webdriver.Chrome(options=options, service=Service(driver_path) if driver_path else None)
    driver.set_page_load_timeout(120)
    driver.set_script_timeout(240)
    return driver


# Runs in the page: loads `manifest` in the player, optionally adds a WebVTT thumbnails track (Shaka), asks for the
# thumbnail of every time, draws each answer's region of its sheet on a canvas, and optionally plays a little.
# Returns {tracks: [{id, width, height, answers: [...]}], played, error}.
PAGE_SCRIPT = r"""
const [kind, manifest, vtt, times, play, seek] = Array.from(arguments).slice(0, 6);
const done = arguments[arguments.length - 1];
const video = document.getElementById('v');
const images = new Map();
// The JPEG of an I-frame image sequence's entry, as an app shows one: the entry's byte range fetched, the payload of
// its mdat box taken (an entry is a moof, then an mdat holding one JPEG), as an object URL.
async function sequenceImage(uri, start, end) {
  const response = await fetch(uri, {headers: {Range: 'bytes=' + start + '-' + end}});
  if (response.status !== 206) throw new Error(uri + ': status ' + response.status + ' for a range');
  const bytes = new Uint8Array(await response.arrayBuffer());
  const view = new DataView(bytes.buffer);
  for (let at = 0; at + 8 <= bytes.length;) {
    const size = view.getUint32(at);
    const type = String.fromCharCode(...bytes.subarray(at + 4, at + 8));
    if (size < 8) break;
    if (type === 'mdat') return URL.createObjectURL(new Blob([bytes.subarray(at + 8, at + size)], {type: 'image/jpeg'}));
    at += size;
  }
  throw new Error(uri + ' ' + start + '-' + end + ': no mdat');
}
async function grey(uri, x, y, w, h, range) {
  const key = range ? uri + '#' + range.join('-') : uri;
  if (!images.has(key)) {
    const img = new Image();
    const loaded = range ? sequenceImage(uri, range[0], range[1]) : Promise.resolve(uri);
    images.set(key, loaded.then(source => { img.src = source; return img.decode(); })
      .then(() => img, e => { throw new Error(uri + ': ' + e.message); }));
  }
  const img = await images.get(key);
  const canvas = document.createElement('canvas');
  canvas.width = Math.max(1, Math.round(w));
  canvas.height = Math.max(1, Math.round(h));
  const context = canvas.getContext('2d');
  context.drawImage(img, x, y, w, h, 0, 0, canvas.width, canvas.height);
  const data = context.getImageData(0, 0, canvas.width, canvas.height).data;
  let sum = 0, n = 0, lo = 255, hi = 0;
  const m = 3;
  for (let j = m; j < canvas.height - m; j++) {
    for (let i = m; i < canvas.width - m; i++) {
      const k = (j * canvas.width + i) * 4;
      const v = (data[k] + data[k + 1] + data[k + 2]) / 3;
      sum += v; n++; lo = Math.min(lo, v); hi = Math.max(hi, v);
    }
  }
  return {mean: n ? sum / n : -1, spread: hi - lo, imageWidth: img.naturalWidth, imageHeight: img.naturalHeight};
}
async function playALittle() {
  if (!play) return null;
  try { await video.play(); } catch (e) { return 'play() failed: ' + e; }
  const deadline = Date.now() + 60000;
  while (Date.now() < deadline && video.currentTime < 1.0) await new Promise(r => setTimeout(r, 100));
  video.pause();
  return video.currentTime;
}
async function shaka_() {
  shaka.polyfill.installAll();
  const player = new shaka.Player();
  await player.attach(video);
  player.configure({streaming: {bufferingGoal: 6, rebufferingGoal: 1}});
  await player.load(manifest);
  let tracks = player.getImageTracks();
  if (vtt) tracks = [await player.addThumbnailsTrack(vtt, 'text/vtt')];
  const out = [];
  for (const track of tracks) {
    const answers = [];
    for (const t of times) {
      const th = await player.getThumbnails(track.id, t);
      if (!th) { answers.push(null); continue; }
      const a = {uri: th.uris[0], x: th.positionX, y: th.positionY, w: th.width, h: th.height,
                 start: th.startTime, duration: th.duration};
      // An image sequence's thumbnail names its media file and the entry's byte range (mimeType application/mp4).
      const sequence = th.codecs === 'mjpg';
      if (sequence) a.range = [th.startByte, th.endByte];
      a.pixels = await grey(a.uri, a.x, a.y, a.w, a.h, sequence ? a.range : null);
      answers.push(a);
    }
    out.push({id: track.id, width: track.width, height: track.height, codecs: track.codecs || null, answers});
  }
  const played = await playALittle();
  // The program date of the player's time zero, where its streams carry program dates.
  let start = null;
  try { const date = player.getPresentationStartTimeAsDate(); start = date ? date.getTime() / 1000 : null; } catch (e) {}
  await player.destroy();
  return {tracks: out, played, start};
}
async function seekFirst() {
  // dash.js makes a Period's thumbnails available once that Period is being played.
  if (seek == null) return;
  video.currentTime = seek;
  await new Promise(resolve => video.addEventListener('seeked', resolve, {once: true}));
  await new Promise(resolve => setTimeout(resolve, 500));
}
async function dashjs_() {
  const player = dashjs.MediaPlayer().create();
  player.updateSettings({debug: {logLevel: dashjs.Debug.LOG_LEVEL_WARNING}});
  await new Promise((resolve, reject) => {
    player.on(dashjs.MediaPlayer.events.STREAM_INITIALIZED, resolve);
    player.on(dashjs.MediaPlayer.events.ERROR, e => reject(new Error(JSON.stringify(e.error || e))));
    player.initialize(video, manifest, false);
  });
  await seekFirst();
  const answers = [];
  for (const t of times) {
    const th = await new Promise(resolve => player.provideThumbnail(t, resolve));
    if (!th) { answers.push(null); continue; }
    const a = {uri: th.url, x: th.x, y: th.y, w: th.width, h: th.height};
    try {
      a.pixels = await grey(a.uri, a.x, a.y, a.w, a.h);
    } catch (e) {
      throw new Error('t=' + t + ': ' + e.message);
    }
    answers.push(a);
  }
  const played = await playALittle();
  player.reset();
  return {tracks: [{id: 'dashjs', answers}], played};
}
(kind === 'shaka' ? shaka_() : dashjs_()).then(done, e => done({error: String(e && (e.stack || e.message || e)) +
  (e && e.code ? ' (Shaka error ' + e.code + ' ' + JSON.stringify(e.data) + ')' : '')}));
"""


def ask(driver, site, bundle, kind, manifest_url, times, vtt_url=None, play=False, seek=None):
    """Every answer of one player for `times` (see PAGE_SCRIPT), after seeking to `seek` (dash.js)."""
    driver.get(site.url + "page/" + bundle)
    return driver.execute_async_script(PAGE_SCRIPT, kind, manifest_url, vtt_url, list(times), play, seek)


def read_vtt(path, url):
    """Filmstrip's own WebVTT track: [{start, end, uri, x, y, w, h}], image URLs resolved against `url`."""
    with open(path, encoding="utf-8") as f:
        text = f.read()
    cues = []
    lines = text.splitlines()
    for i, line in enumerate(lines):
        if "-->" not in line:
            continue
        start, end = (seconds(part.strip().split()[0]) for part in line.split("-->"))
        image, _, fragment = lines[i + 1].partition("#xywh=")
        x, y, w, h = (int(v) for v in fragment.split(","))
        cues.append({"start": start, "end": end, "uri": urllib.parse.urljoin(url, image), "x": x, "y": y, "w": w,
                     "h": h})
    return cues


def seconds(stamp):
    parts = [float(p) for p in stamp.split(":")]
    total = 0.0
    for p in parts:
        total = total * 60 + p
    return total


def probe_times(cues):
    """Every thumbnail's start, middle and last instant."""
    times = []
    for cue in cues:
        times += [cue["start"], round((cue["start"] + cue["end"]) / 2, 3), round(cue["end"] - 0.05, 3)]
    return times


def cue_at(cues, t):
    for cue in cues:
        if cue["start"] <= t < cue["end"]:
            return cue
    return None


def json_dump(value):
    return json.dumps(value, indent=1)[:4000]
