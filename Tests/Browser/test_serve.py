"""`filmstrip serve` and `filmstrip page` end to end: raw HTTP against the real server, and the pages in headless
Chromium driven by selenium. Test videos are grey ramps made with the ffmpeg CLI: the luma of the frame at time T
is 16 + 3.5 T, so a preview's pixels tell which time it shows.

Run: FILMSTRIP_BIN=.build/debug/filmstrip python3 -m unittest discover -s Tests/Browser -v
"""
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time
import unittest
import urllib.parse
import urllib.request

sys.path.insert(0, os.path.dirname(__file__))
import png  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BIN = os.environ.get("FILMSTRIP_BIN") or os.path.join(
    subprocess.check_output(["swift", "build", "--show-bin-path"], cwd=ROOT, text=True).strip(), "filmstrip")
UNICODE_NAME = "Ünïcødé 名前 #1.mp4"
# A quote followed by a combining mark is one character, but still a quote to an HTML parser.
QUOTE_NAME = "q\"\u0301 onmouseover=\"x\u0301' <b>.mp4"


def ramp(path, seconds, keyframe_every=25):
    """A 320x180 H.264 video whose luma rises 3.5 per second, a keyframe every `keyframe_every` frames (25 fps)."""
    subprocess.run(
        ["ffmpeg", "-v", "error", "-y", "-f", "lavfi", "-i",
         f"color=c=black:s=320x180:r=25:d={seconds},format=yuv420p,geq=lum='16+3.5*T':cb=128:cr=128",
         "-c:v", "libx264", "-g", str(keyframe_every), "-keyint_min", str(keyframe_every), "-sc_threshold", "0",
         "-pix_fmt", "yuv420p", "-movflags", "+faststart", path],
        check=True)


def time_of_grey(level):
    """The time of a ramp frame from its grey level (full-range RGB of limited-range luma)."""
    return level * 219 / 255 / 3.5


class Server:
    """`filmstrip serve` on a free port."""

    def __init__(self, folders, cache, *extra):
        self.process = subprocess.Popen(
            [BIN, "serve", *folders, "--port", "0", "--cache-dir", cache, *extra],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        deadline = time.time() + 120
        self.url = None
        self.banner = []
        while time.time() < deadline:
            line = self.process.stdout.readline()
            if not line:
                raise RuntimeError("serve exited: " + self.process.stderr.read())
            self.banner.append(line)
            if line.strip().startswith("http://"):
                self.url = line.strip()
                break
        if not self.url:
            raise RuntimeError("serve printed no URL")
        parsed = urllib.parse.urlparse(self.url)
        self.host, self.port = parsed.hostname, parsed.port

    def stop(self):
        self.process.terminate()
        try:
            self.process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
        self.process.stdout.close()
        self.process.stderr.close()

    def raw(self, target, method="GET", headers=(), host=None):
        """One request written byte for byte (no client-side normalisation); returns (status, headers, body)."""
        with socket.create_connection((self.host, self.port), timeout=60) as s:
            host = f"{self.host}:{self.port}" if host is None else host
            lines = [f"{method} {target} HTTP/1.1", f"Host: {host}", "Connection: close", *headers]
            s.sendall(("\r\n".join(lines) + "\r\n\r\n").encode("latin-1"))
            data = b""
            while True:
                chunk = s.recv(1 << 16)
                if not chunk:
                    break
                data += chunk
        head, _, body = data.partition(b"\r\n\r\n")
        status_line, *header_lines = head.decode("latin-1").split("\r\n")
        fields = {}
        for line in header_lines:
            name, _, value = line.partition(":")
            fields[name.strip().lower()] = value.strip()
        if fields.get("transfer-encoding") == "chunked":
            body = dechunk(body)
        return int(status_line.split()[1]), fields, body

    def get_json(self, path):
        with urllib.request.urlopen(self.url.rstrip("/") + path, timeout=120) as response:
            return json.load(response)

    def events(self, src, limit=500):
        """The server-sent events of /api/progress for `src`, until the stream ends."""
        url = self.url.rstrip("/") + "/api/progress?src=" + urllib.parse.quote(src, safe="")
        events, kind = [], None
        with urllib.request.urlopen(url, timeout=120) as response:
            self.assert_type = response.headers["Content-Type"]
            for raw_line in response:
                line = raw_line.decode().rstrip("\n")
                if line.startswith("event: "):
                    kind = line[7:]
                elif line.startswith("data: "):
                    events.append((kind, json.loads(line[6:])))
                    if len(events) >= limit:
                        break
        return events


def dechunk(body):
    out = b""
    while body:
        size_line, _, rest = body.partition(b"\r\n")
        size = int(size_line.split(b";")[0], 16)
        if size == 0:
            break
        out += rest[:size]
        body = rest[size + 2:]
    return out


def quote(path):
    return urllib.parse.quote(path, safe="/")


def setUpModule():
    global WORK, LIBRARY, OUTSIDE, SERVER, CACHE
    WORK = tempfile.mkdtemp(prefix="filmstrip-serve-")
    LIBRARY = os.path.join(WORK, "library")
    OUTSIDE = os.path.join(WORK, "outside")
    CACHE = os.path.join(WORK, "cache")
    os.makedirs(os.path.join(LIBRARY, "nested"))
    os.makedirs(OUTSIDE)
    # Keyframes 10 s apart (a common encoder default), so each 2 s preview must be decoded at its own time.
    ramp(os.path.join(LIBRARY, "ramp.mp4"), 60, keyframe_every=250)
    for name in ("fresh.mp4", "second.mp4", "third.mp4"):
        ramp(os.path.join(LIBRARY, name), 20)
    ramp(os.path.join(LIBRARY, "nested", UNICODE_NAME), 10)
    shutil.copy(os.path.join(LIBRARY, "nested", UNICODE_NAME), os.path.join(LIBRARY, QUOTE_NAME))
    ramp(os.path.join(LIBRARY, "beside.mp4"), 30)
    ramp(os.path.join(OUTSIDE, "secret.mp4"), 4)
    with open(os.path.join(OUTSIDE, "secret.txt"), "w") as f:
        f.write("root:secret\n")
    # A track beside a video, at 6 s per thumbnail (the server's own would be 2 s).
    previews = os.path.join(LIBRARY, "beside-previews")
    subprocess.run([BIN, "generate", os.path.join(LIBRARY, "beside.mp4"), "--output", previews, "--interval", "6"],
                   check=True, stdout=subprocess.DEVNULL)
    with open(os.path.join(previews, "thumbnails.vtt")) as f:
        track = f.read().replace("sprite-", "beside-previews/sprite-")
    with open(os.path.join(LIBRARY, "beside.vtt"), "w") as f:
        f.write(track)
    # A track beside a video whose images lie outside the library: ignored, a track is generated instead.
    ramp(os.path.join(LIBRARY, "evil.mp4"), 6)
    shutil.copy(os.path.join(previews, "sprite-1.jpg"), os.path.join(OUTSIDE, "sprite.jpg"))
    with open(os.path.join(LIBRARY, "evil.vtt"), "w") as f:
        f.write("WEBVTT\n\n00:00.000 --> 00:06.000\n../outside/sprite.jpg#xywh=0,0,160,90\n")
    # A subtitle track beside a video parses as WebVTT but names no images: ignored, a track is generated.
    ramp(os.path.join(LIBRARY, "subs.mp4"), 6)
    with open(os.path.join(LIBRARY, "subs.vtt"), "w") as f:
        f.write("WEBVTT\n\n00:00.000 --> 00:03.000\nHello, these are subtitles\n")
    ramp(os.path.join(LIBRARY, "later.mp4"), 6)
    # Sound alone, with a cover picture of one colour (0x3080C0): listed, its poster the cover.
    subprocess.run(["ffmpeg", "-v", "error", "-y", "-f", "lavfi", "-i", "sine=f=440:d=4", "-f", "lavfi", "-i",
                    "color=c=0x3080C0:s=200x200:d=1", "-frames:v", "1", "-map", "0:a", "-map", "1:v", "-c:a",
                    "libmp3lame", "-c:v", "png", "-disposition:v", "attached_pic", os.path.join(LIBRARY, "song.mp3")],
                   check=True)
    # What the ffmpeg CLI's HLS muxer writes: a stream's .ts segments are not videos of their own; a single-file
    # stream (byte ranges into one .ts) is one.
    for folder, flags in (("hls", []), ("hls-single", ["-hls_flags", "single_file"])):
        os.makedirs(os.path.join(LIBRARY, folder))
        subprocess.run(["ffmpeg", "-v", "error", "-i", os.path.join(LIBRARY, "later.mp4"), "-c", "copy", "-f", "hls",
                        "-hls_time", "2", "-hls_playlist_type", "vod", *flags,
                        os.path.join(LIBRARY, folder, "index.m3u8")], check=True)
    # An HLS stream with an image track of its own (what `generate --attach` writes beside it).
    os.makedirs(os.path.join(LIBRARY, "hls-own"))
    subprocess.run(["ffmpeg", "-v", "error", "-i", os.path.join(LIBRARY, "later.mp4"), "-c", "copy", "-f", "hls",
                    "-hls_time", "2", "-hls_playlist_type", "vod", os.path.join(LIBRARY, "hls-own", "index.m3u8")],
                   check=True)
    subprocess.run([BIN, "generate", os.path.join(LIBRARY, "hls-own", "index.m3u8"), "--output",
                    os.path.join(LIBRARY, "hls-own"), "--interval", "3", "--attach"], check=True,
                   stdout=subprocess.DEVNULL)
    # A DASH stream in single-file mode: its Representation files are the stream's, not videos of their own.
    os.makedirs(os.path.join(LIBRARY, "dash"))
    subprocess.run(["ffmpeg", "-v", "error", "-i", os.path.join(LIBRARY, "later.mp4"), "-c", "copy", "-f", "dash",
                    "-single_file", "1", os.path.join(LIBRARY, "dash", "manifest.mpd")], check=True)
    with open(os.path.join(LIBRARY, "broken.mp4"), "wb") as f:
        f.write(b"\x00\x00\x00\x18ftypmp42" + os.urandom(4000))
    with open(os.path.join(LIBRARY, ".hidden.mp4"), "wb") as f:
        f.write(b"hidden")
    os.symlink(os.path.join(OUTSIDE, "secret.mp4"), os.path.join(LIBRARY, "link-out.mp4"))
    os.symlink(OUTSIDE, os.path.join(LIBRARY, "linkdir"))
    os.symlink(os.path.join(LIBRARY, "ramp.mp4"), os.path.join(LIBRARY, "nested", "link-in.mp4"))
    SERVER = Server([LIBRARY], CACHE, "--parallel", "1")


def tearDownModule():
    SERVER.stop()
    shutil.rmtree(WORK, ignore_errors=True)


LISTED = sorted(["ramp.mp4", "fresh.mp4", "second.mp4", "third.mp4", "nested/" + UNICODE_NAME, "beside.mp4",
                 "evil.mp4", "broken.mp4", "nested/link-in.mp4", QUOTE_NAME, "subs.mp4", "later.mp4",
                 "hls/index.m3u8", "hls-single/index.m3u8", "dash/manifest.mpd", "hls-own/master.m3u8",
                 "song.mp3"])


class HTTPTests(unittest.TestCase):
    def test_binds_loopback_by_default_and_prints_the_url(self):
        self.assertEqual(SERVER.host, "127.0.0.1")
        self.assertIn(LIBRARY, "".join(SERVER.banner))

    def test_path_traversal_is_refused_in_every_form(self):
        targets = [
            "/watch/../outside/secret.mp4", "/watch/..%2foutside%2fsecret.mp4", "/watch/%2e%2e/outside/secret.mp4",
            "/watch/%2E%2E%2Foutside%2Fsecret.mp4", "/media/../outside/secret.mp4", "/media/%2e%2e/outside/secret.mp4",
            "/media/..%2Foutside%2Fsecret.txt", "/media/nested/..%2F..%2Foutside%2Fsecret.mp4",
            "/media/" + quote(os.path.join(OUTSIDE, "secret.mp4")),
            "/media/%2F" + quote(OUTSIDE.lstrip("/")).replace("/", "%2F") + "%2Fsecret.mp4",
            "/media//" + OUTSIDE.lstrip("/") + "/secret.mp4",
            "/media/link-out.mp4", "/media/linkdir/secret.mp4", "/watch/link-out.mp4", "/watch/linkdir/secret.mp4",
            "/media/ramp.mp4%00.txt", "/media/./ramp.mp4",
            "/api/track?src=..%2Foutside%2Fsecret.mp4", "/api/track?src=" + quote(os.path.join(OUTSIDE, "secret.mp4")),
            "/api/thumbnail?src=link-out.mp4&t=1", "/api/thumbnail?src=linkdir%2Fsecret.mp4&t=1",
            "/api/progress?src=..%2F..%2Fetc%2Fpasswd", "/api/image?src=..%2Foutside%2Fsecret.mp4&i=0",
            "/../outside/secret.txt", "/media/secret.txt", "/media/.hidden.mp4%2F..%2F..%2Foutside%2Fsecret.txt",
            "/media/.hidden.mp4", "/api/thumbnail?src=.hidden.mp4&t=0",
        ]
        for target in targets:
            with self.subTest(target=target):
                status, _, body = SERVER.raw(target)
                self.assertIn(status, (403, 404))
                self.assertNotIn(b"root:secret", body)
                self.assertNotIn(b"ftyp", body)
                self.assertLess(len(body), 200)

    def test_symbolic_links_inside_the_library_are_served(self):
        status, _, body = SERVER.raw("/media/nested/link-in.mp4", headers=["Range: bytes=0-15"])
        self.assertEqual(status, 206)
        self.assertIn(b"ftyp", body)

    def test_video_bytes_with_range_and_head(self):
        path = os.path.join(LIBRARY, "ramp.mp4")
        size = os.path.getsize(path)
        with open(path, "rb") as f:
            content = f.read()
        status, headers, body = SERVER.raw("/media/ramp.mp4", method="HEAD")
        self.assertEqual((status, headers["content-length"], headers["accept-ranges"]), (200, str(size), "bytes"))
        self.assertEqual(body, b"")
        self.assertEqual(headers["content-type"], "video/mp4")
        status, headers, body = SERVER.raw("/media/ramp.mp4", headers=["Range: bytes=100-199"])
        self.assertEqual((status, headers["content-range"], body), (206, f"bytes 100-199/{size}", content[100:200]))
        status, headers, body = SERVER.raw("/media/ramp.mp4", headers=["Range: bytes=-50"])
        self.assertEqual((status, body), (206, content[-50:]))
        status, headers, body = SERVER.raw("/media/ramp.mp4", headers=[f"Range: bytes={size}-"])
        self.assertEqual((status, headers["content-range"]), (416, f"bytes */{size}"))
        status, _, body = SERVER.raw("/media/" + quote("nested/" + UNICODE_NAME))
        self.assertEqual((status, len(body)), (200, os.path.getsize(os.path.join(LIBRARY, "nested", UNICODE_NAME))))

    def test_progress_events_then_one_generation_per_video(self):
        before = SERVER.get_json("/api/status")["generations"]["started"]
        results = []

        def listen():
            results.append(SERVER.events("fresh.mp4"))

        listeners = [threading.Thread(target=listen) for _ in range(4)]
        for thread in listeners:
            thread.start()
        track = SERVER.get_json("/api/track?src=fresh.mp4")
        for thread in listeners:
            thread.join(120)
        self.assertEqual(len(results), 4)
        for events in results:
            self.assertEqual(events[-1], ("ready", {"cues": 10, "origin": "generated"}))
            fractions = [data["fraction"] for kind, data in events if kind == "progress"]
            self.assertEqual(fractions, sorted(fractions))
        every = [data["fraction"] for events in results for kind, data in events if kind == "progress"]
        self.assertTrue(every, "no progress event reached any listener")
        self.assertEqual(track["origin"], "generated")
        self.assertEqual(len(track["cues"]), 10)
        self.assertEqual(SERVER.get_json("/api/status")["generations"]["started"], before + 1)
        self.assertFalse([name for name in os.listdir(CACHE) if name.startswith(".staging")])
        self.assertEqual(SERVER.events("fresh.mp4"), [("ready", {"cues": 10, "origin": "generated"})])

    def test_generations_are_bounded(self):
        threads = [threading.Thread(target=SERVER.get_json, args=(f"/api/track?src={name}",))
                   for name in ("second.mp4", "third.mp4", "evil.mp4")]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(120)
        status = SERVER.get_json("/api/status")["generations"]
        self.assertEqual(status["limit"], 1)
        self.assertEqual(status["peakRunning"], 1)
        self.assertEqual(status["running"], 0)

    def test_track_json_cues_and_images(self):
        track = SERVER.get_json("/api/track?src=" + urllib.parse.quote("nested/" + UNICODE_NAME, safe=""))
        self.assertEqual(len(track["cues"]), 5)
        first = track["cues"][0]
        self.assertEqual((first["start"], first["end"]), (0, 2))
        self.assertEqual(first["region"], {"x": 0, "y": 0, "w": 160, "h": 90})
        status, headers, body = SERVER.raw(first["image"])
        self.assertEqual((status, headers["content-type"], body[:2]), (200, "image/jpeg", b"\xff\xd8"))
        self.assertEqual(SERVER.raw(first["image"].replace("i=0", "i=9"))[0], 404)

    def test_a_track_beside_the_video_is_used(self):
        track = SERVER.get_json("/api/track?src=beside.mp4")
        self.assertEqual(track["origin"], "beside")
        self.assertEqual([(c["start"], c["end"]) for c in track["cues"]], [(0, 6), (6, 12), (12, 18), (18, 24),
                                                                            (24, 30)])

    def test_a_beside_track_with_images_outside_the_library_is_ignored(self):
        track = SERVER.get_json("/api/track?src=evil.mp4")
        self.assertEqual(track["origin"], "generated")
        for image in {cue["image"] for cue in track["cues"]}:
            status, _, body = SERVER.raw(image)
            self.assertEqual(status, 200)

    def test_a_subtitle_track_beside_a_video_is_not_taken_for_previews(self):
        track = SERVER.get_json("/api/track?src=subs.mp4")
        self.assertEqual((track["origin"], len(track["cues"])), ("generated", 3))
        for image in {cue["image"] for cue in track["cues"]}:
            self.assertEqual(SERVER.raw(image)[0], 200)

    def test_a_track_added_or_removed_beside_a_video_is_noticed(self):
        self.assertEqual(SERVER.get_json("/api/track?src=later.mp4")["origin"], "generated")
        beside = os.path.join(LIBRARY, "later.vtt")
        with open(os.path.join(LIBRARY, "beside.vtt")) as f:
            text = f.read()
        with open(beside, "w") as f:
            f.write(text)
        try:
            track = SERVER.get_json("/api/track?src=later.mp4")
            self.assertEqual((track["origin"], track["cues"][1]["start"]), ("beside", 6))
        finally:
            os.remove(beside)
        self.assertEqual(SERVER.get_json("/api/track?src=later.mp4")["origin"], "cached")

    def test_thumbnail_is_the_jpeg_at_t(self):
        SERVER.get_json("/api/track?src=ramp.mp4")
        for t in (0, 13, 41.5):
            status, headers, body = SERVER.raw(f"/api/thumbnail?src=ramp.mp4&t={t}")
            self.assertEqual((status, headers["content-type"], headers["x-filmstrip-source"]), (200, "image/jpeg",
                                                                                                  "track"))
            self.assertEqual(body[:2], b"\xff\xd8")
        self.assertEqual(SERVER.raw("/api/thumbnail?src=ramp.mp4&t=nan")[0], 400)
        self.assertEqual(SERVER.raw("/api/thumbnail?src=ramp.mp4")[0], 400)
        self.assertEqual(SERVER.raw("/api/thumbnail?src=ramp.mp4&t=999")[0], 404)
        # The last cue also covers its end, as on the page.
        self.assertEqual(SERVER.raw("/api/thumbnail?src=ramp.mp4&t=60")[0], 200)

    def test_a_file_of_sound_alone_has_its_cover_for_poster(self):
        status, headers, body = SERVER.raw("/api/thumbnail?src=song.mp3&t=0")
        self.assertEqual((status, headers["content-type"]), (200, "image/jpeg"))
        mean = subprocess.run(["ffmpeg", "-v", "error", "-i", "-", "-vf", "scale=1:1", "-f", "rawvideo", "-pix_fmt",
                               "rgb24", "-"], input=body, capture_output=True, check=True).stdout
        self.assertTrue(all(abs(a - b) < 8 for a, b in zip(mean, (0x30, 0x80, 0xC0))), list(mean))
        # It has no previews to make, and says why.
        status, _, body = SERVER.raw("/api/track?src=song.mp3")
        self.assertEqual(status, 422)
        self.assertIn(b"audio only", body)

    def test_a_broken_video_fails_clearly(self):
        events = SERVER.events("broken.mp4")
        self.assertEqual(events[-1][0], "failed")
        self.assertIn("broken.mp4", events[-1][1]["message"])
        status, _, body = SERVER.raw("/api/track?src=broken.mp4")
        self.assertEqual(status, 422)
        self.assertEqual(SERVER.raw("/api/thumbnail?src=broken.mp4&t=1")[0], 422)

    def test_other_hosts_and_cross_site_requests_are_refused(self):
        for host in ("evil.example", "evil.example:%d" % SERVER.port, "127.0.0.1.evil.example", ""):
            with self.subTest(host=host):
                status, headers, body = SERVER.raw("/", host=host)
                self.assertEqual(status, 421)
                self.assertNotIn(b"ramp.mp4", body)
        for host in ("localhost:%d" % SERVER.port, "127.0.0.1", "[::1]:%d" % SERVER.port):
            self.assertEqual(SERVER.raw("/", host=host)[0], 200)
        for target in ("/api/track?src=ramp.mp4", "/api/thumbnail?src=ramp.mp4&t=1", "/media/ramp.mp4",
                       "/api/status"):
            with self.subTest(target=target):
                status, _, body = SERVER.raw(target, headers=["Sec-Fetch-Site: cross-site"])
                self.assertEqual(status, 403)
        status, headers, _ = SERVER.raw("/media/ramp.mp4", headers=["Sec-Fetch-Site: same-origin", "Range: bytes=0-1"])
        self.assertEqual((status, headers["cross-origin-resource-policy"]), (206, "same-origin"))
        # A link from elsewhere still opens the library.
        self.assertEqual(SERVER.raw("/", headers=["Sec-Fetch-Site: cross-site"])[0], 200)

    def test_if_range_and_range_spellings(self):
        size = os.path.getsize(os.path.join(LIBRARY, "ramp.mp4"))
        _, headers, _ = SERVER.raw("/media/ramp.mp4", method="HEAD")
        etag, modified = headers["etag"], headers["last-modified"]
        self.assertEqual(SERVER.raw("/media/ramp.mp4", headers=["Range: bytes=0-9", f"If-Range: {etag}"])[0], 206)
        self.assertEqual(SERVER.raw("/media/ramp.mp4", headers=["Range: bytes=0-9", f"If-Range: {modified}"])[0], 206)
        status, _, body = SERVER.raw("/media/ramp.mp4", headers=["Range: bytes=0-9", 'If-Range: "other"'])
        self.assertEqual((status, len(body)), (200, size))
        self.assertEqual(SERVER.raw("/media/ramp.mp4", headers=["Range: Bytes=0-9"])[0], 206)
        self.assertEqual(SERVER.raw("/media/ramp.mp4", headers=["Range: bytes=+0-9"])[0], 200)
        status, headers, body = SERVER.raw("/", method="HEAD")
        self.assertEqual((status, body), (200, b""))
        self.assertGreater(int(headers["content-length"]), 1000)

    def test_absurd_times_are_refused_and_the_server_lives_on(self):
        for t in ("1e19", "9e15", "1e300"):
            self.assertEqual(SERVER.raw(f"/api/thumbnail?src=second.mp4&t={t}")[0], 404)
        self.assertEqual(SERVER.raw("/api/thumbnail?src=second.mp4&t=-1")[0], 400)
        self.assertEqual(SERVER.raw("/api/thumbnail?src=second.mp4&t=inf")[0], 400)
        self.assertEqual(SERVER.raw("/api/thumbnail?src=second.mp4&t=1")[0], 200)

    def test_page_writes_only_where_it_may(self):
        source = os.path.join(LIBRARY, "nested", UNICODE_NAME)
        foreign = os.path.join(WORK, "foreign")
        os.makedirs(foreign)
        with open(os.path.join(foreign, "index.html"), "w") as f:
            f.write("<p>mine</p>")
        result = subprocess.run([BIN, "page", source, "--output", foreign], capture_output=True, text=True)
        self.assertEqual(result.returncode, 2)
        self.assertIn("not a page Filmstrip wrote", result.stderr)
        with open(os.path.join(foreign, "index.html")) as f:
            self.assertEqual(f.read(), "<p>mine</p>")
        self.assertEqual(os.listdir(foreign), ["index.html"])
        # An output that is a file, and a video that cannot be read: clear errors, nothing left behind.
        result = subprocess.run([BIN, "page", source, "--output", os.path.join(LIBRARY, "ramp.mp4")],
                                capture_output=True, text=True)
        self.assertEqual(result.returncode, 2)
        self.assertIn("is a file", result.stderr)
        fresh = os.path.join(WORK, "never")
        result = subprocess.run([BIN, "page", os.path.join(LIBRARY, "broken.mp4"), "--output", fresh],
                                capture_output=True, text=True)
        self.assertEqual(result.returncode, 2)
        self.assertFalse(os.path.exists(fresh))
        # Written into the video's own folder through a link: the video is the page's video, and stays.
        folder = os.path.join(WORK, "own")
        os.makedirs(folder)
        shutil.copy(source, os.path.join(folder, "v.mp4"))
        os.symlink(folder, os.path.join(WORK, "own-link"))
        size = os.path.getsize(os.path.join(folder, "v.mp4"))
        for _ in range(2):
            subprocess.run([BIN, "page", os.path.join(folder, "v.mp4"), "--output", os.path.join(WORK, "own-link")],
                           check=True, stdout=subprocess.DEVNULL)
            self.assertEqual(os.path.getsize(os.path.join(folder, "v.mp4")), size)
        self.assertEqual(sorted(os.listdir(folder)), ["index.html", "previews", "v.mp4"])

    def test_start_up_errors_are_clear(self):
        result = subprocess.run([BIN, "serve", LIBRARY, "--port", str(SERVER.port), "--cache-dir", CACHE],
                                capture_output=True, text=True, timeout=60)
        self.assertEqual(result.returncode, 2)
        self.assertIn(f"cannot listen on 127.0.0.1:{SERVER.port}", result.stderr)
        result = subprocess.run([BIN, "serve", os.path.join(WORK, "missing"), "--port", "0"],
                                capture_output=True, text=True, timeout=60)
        self.assertEqual(result.returncode, 2)
        self.assertIn("is not a folder", result.stderr)
        unwritable = os.path.join(LIBRARY, "ramp.mp4", "cache")  # under a file: it cannot be made
        result = subprocess.run([BIN, "serve", LIBRARY, "--port", "0", "--cache-dir", unwritable],
                                capture_output=True, text=True, timeout=60)
        self.assertEqual(result.returncode, 2)
        self.assertIn("cannot write to the cache directory", result.stderr)

    def test_any_loopback_address_keeps_the_host_check(self):
        for host in ("127.0.0.2", "[::1]"):
            with self.subTest(host=host):
                try:
                    other = Server([LIBRARY], CACHE, "--host", host)
                except RuntimeError as error:
                    if host == "[::1]" and ("Cannot assign" in str(error) or "not available" in str(error)):
                        continue  # no IPv6 loopback on this machine
                    raise
                try:
                    self.assertNotIn("other machines", "".join(other.banner))
                    self.assertEqual(other.raw("/", host="evil.example")[0], 421)
                    self.assertEqual(other.raw("/", host=f"{host}:{other.port}")[0], 200)
                finally:
                    other.stop()

    def test_bad_requests(self):
        self.assertEqual(SERVER.raw("/api/track")[0], 400)
        self.assertEqual(SERVER.raw("/api/track?src=missing.mp4")[0], 404)
        self.assertEqual(SERVER.raw("/watch/missing.mp4")[0], 404)
        self.assertEqual(SERVER.raw("/api/image?src=ramp.mp4&i=-1")[0], 400)
        self.assertEqual(SERVER.raw("/watch/%zz")[0], 403)


class PageTests(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        from selenium import webdriver
        from selenium.webdriver.chrome.options import Options
        from selenium.webdriver.chrome.service import Service
        options = Options()
        for argument in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--window-size=1100,900",
                         "--autoplay-policy=no-user-gesture-required", "--mute-audio"):
            options.add_argument(argument)
        if shutil.which("chromium"):
            options.binary_location = shutil.which("chromium")
        options.set_capability("goog:loggingPrefs", {"performance": "ALL"})
        driver_path = shutil.which("chromedriver")
        cls.driver = webdriver.Chrome(options=options, service=Service(driver_path) if driver_path else None)
        cls.driver.set_page_load_timeout(120)

    @classmethod
    def tearDownClass(cls):
        cls.driver.quit()

    def requested_urls(self):
        urls = []
        for entry in self.driver.get_log("performance"):
            message = json.loads(entry["message"])["message"]
            if message["method"] == "Network.requestWillBeSent":
                urls.append(message["params"]["request"]["url"])
        return urls

    def wait(self, condition, timeout=120, message="timed out"):
        deadline = time.time() + timeout
        while time.time() < deadline:
            value = condition()
            if value:
                return value
            time.sleep(0.1)
        self.fail(message)

    def open_watch(self, url, duration):
        self.driver.get(url)
        self.wait(lambda: self.driver.execute_script(
            "return document.getElementById('track-status').dataset.state === 'ready'"),
            message="the track never became ready: " + self.driver.find_element("id", "track-status").text)
        self.wait(lambda: self.driver.execute_script("return document.getElementById('video').readyState >= 1"),
                  message="the video never loaded")
        self.assertAlmostEqual(self.driver.execute_script("return document.getElementById('video').duration"),
                               duration, delta=0.1)
        return self.driver.find_element("id", "scrubber")

    def offset(self, scrubber, t, duration):
        """The pointer offset from the scrubber's centre for time t."""
        width = scrubber.size["width"]
        return round(t / duration * width - width / 2)

    def hover_and_check(self, scrubber, t, duration, interval):
        from selenium.webdriver import ActionChains
        ActionChains(self.driver).move_to_element_with_offset(scrubber, self.offset(scrubber, t, duration), 0).perform()
        self.check_preview(t, interval)

    def check_preview(self, t, interval):
        preview = self.driver.find_element("id", "preview")
        self.wait(lambda: preview.is_displayed(), 10, "no preview shown")
        start = int(t // interval) * interval
        self.assertEqual(float(preview.get_attribute("data-start")), start)
        # Exactly one thumbnail: the element is one tile, and every pixel of it is one grey.
        self.assertEqual((preview.size["width"], preview.size["height"]), (160, 90))
        levels = self.wait(lambda: self.loaded_levels(preview), 20, "the preview never drew its sheet")
        self.assertLess(max(levels) - min(levels), 14, "the preview shows more than one thumbnail")
        shown = time_of_grey(sum(levels) / len(levels))
        self.assertGreaterEqual(shown, start - 0.7, f"hovering {t} s shows the frame of {shown:.2f} s")
        self.assertLess(shown, start + interval + 0.7, f"hovering {t} s shows the frame of {shown:.2f} s")
        label = self.driver.find_element("id", "preview-time")
        self.assertAlmostEqual(float(label.get_attribute("data-seconds")), t, delta=0.25)
        minutes, seconds = label.text.split(":")
        self.assertEqual(int(minutes) * 60 + int(seconds), int(float(label.get_attribute("data-seconds"))))

    def loaded_levels(self, preview):
        levels = png.grey_levels(preview.screenshot_as_png)
        # The element's own background is #222 (34) until the sheet has decoded.
        return levels if abs(sum(levels) / len(levels) - 34) > 1.5 else None

    def test_library_lists_every_video_with_poster_name_and_duration(self):
        self.driver.get(SERVER.url)
        links = self.driver.find_elements("css selector", "#library a.video")
        self.assertEqual(sorted(a.get_attribute("data-path") for a in links), LISTED)
        by_path = {a.get_attribute("data-path"): a for a in links}
        self.assertEqual(by_path["nested/" + UNICODE_NAME].find_element("class name", "name").text, UNICODE_NAME)
        self.assertEqual(by_path["ramp.mp4"].find_element("class name", "duration").text, "1:00")
        self.assertEqual(by_path["beside.mp4"].find_element("class name", "duration").text, "0:30")
        for path, link in by_path.items():
            if path == "broken.mp4":
                continue
            poster = link.find_element("class name", "poster")
            self.driver.execute_script("arguments[0].scrollIntoView()", poster)
            self.wait(lambda: self.driver.execute_script(
                "return arguments[0].complete && arguments[0].naturalWidth > 0", poster), 60, f"no poster for {path}")
        # A name that holds quotes, a combining mark and markup is shown as written, and adds no attribute.
        odd = by_path[QUOTE_NAME]
        self.assertEqual(odd.find_element("class name", "name").text, QUOTE_NAME)
        self.assertIsNone(odd.get_attribute("onmouseover"))
        self.assertEqual(self.driver.find_elements("css selector", "#library b"), [])
        link = by_path["nested/" + UNICODE_NAME]
        self.assertTrue(link.get_attribute("href").endswith("/watch/nested/" + quote(UNICODE_NAME).replace("%20", "%20")
                                                            .replace("#", "%23")))

    def test_watch_page_previews_follow_the_pointer_and_seek(self):
        from selenium.webdriver import ActionChains
        from selenium.webdriver.common.keys import Keys
        self.driver.get_log("performance")
        scrubber = self.open_watch(SERVER.url + "watch/ramp.mp4", 60)
        self.assertEqual(self.driver.execute_script("return window.filmstrip.cues.length"), 30)
        for t in (7, 21, 38.5, 55):
            with self.subTest(hover=t):
                self.hover_and_check(scrubber, t, 60, 2)
        # Dragging updates the preview, releasing seeks.
        actions = ActionChains(self.driver)
        actions.move_to_element_with_offset(scrubber, self.offset(scrubber, 11, 60), 0).click_and_hold().perform()
        self.check_preview(11, 2)
        ActionChains(self.driver).move_to_element_with_offset(scrubber, self.offset(scrubber, 45, 60), 0).perform()
        self.check_preview(45, 2)
        ActionChains(self.driver).release().perform()
        self.wait(lambda: abs(self.driver.execute_script("return document.getElementById('video').currentTime") - 45)
                  < 0.3, 10, "release did not seek")
        # A click seeks.
        ActionChains(self.driver).move_to_element_with_offset(scrubber, self.offset(scrubber, 30, 60), 0).click() \
            .perform()
        self.wait(lambda: abs(self.driver.execute_script("return document.getElementById('video').currentTime") - 30)
                  < 0.3, 10, "click did not seek")
        # Arrow keys step 5 s and show the preview there.
        scrubber.send_keys(Keys.ARROW_RIGHT)
        self.wait(lambda: abs(self.driver.execute_script("return document.getElementById('video').currentTime") - 35)
                  < 0.3, 10, "ArrowRight did not seek")
        self.check_preview(35, 2)
        scrubber.send_keys(Keys.ARROW_LEFT, Keys.ARROW_LEFT)
        self.wait(lambda: abs(self.driver.execute_script("return document.getElementById('video').currentTime") - 25)
                  < 0.3, 10, "ArrowLeft did not seek")
        # Nothing went to another host.
        origin = SERVER.url.rstrip("/")
        for url in self.requested_urls():
            self.assertTrue(url.startswith(origin + "/"), url)

    def test_touch_drags_and_seeks(self):
        from selenium.webdriver.common.actions import interaction
        from selenium.webdriver.common.actions.action_builder import ActionBuilder
        from selenium.webdriver.common.actions.pointer_input import PointerInput
        scrubber = self.open_watch(SERVER.url + "watch/ramp.mp4", 60)
        self.driver.execute_script(
            "window.touchLog = []; arguments[0].addEventListener('pointermove', (e) => window.touchLog.push("
            "[e.pointerType, document.getElementById('preview').dataset.start]))", scrubber)
        builder = ActionBuilder(self.driver, mouse=PointerInput(interaction.POINTER_TOUCH, "finger"))
        builder.pointer_action.move_to(scrubber, self.offset(scrubber, 9, 60), 0).pointer_down() \
            .move_to(scrubber, self.offset(scrubber, 17, 60), 0).pointer_up()
        builder.perform()
        self.wait(lambda: abs(self.driver.execute_script("return document.getElementById('video').currentTime") - 17)
                  < 0.3, 10, "the touch did not seek")
        # The drag moved the preview with the finger (its pixels are checked by the mouse tests).
        log = self.driver.execute_script("return window.touchLog")
        self.assertTrue(log and all(kind == "touch" for kind, _ in log), log)
        preview = self.driver.find_element("id", "preview")
        self.assertEqual(float(preview.get_attribute("data-start")), 16)
        label = self.driver.find_element("id", "preview-time")
        self.assertAlmostEqual(float(label.get_attribute("data-seconds")), 17, delta=0.25)

    def test_first_view_of_an_untracked_video_generates_its_track(self):
        name = "nested/" + UNICODE_NAME
        self.open_watch(SERVER.url + "watch/" + quote(name).replace("#", "%23"), 10)
        state = self.driver.execute_script("return window.filmstrip")
        self.assertIn(state["origin"], ("generated", "cached"))
        self.assertEqual(len(state["cues"]), 5)
        self.assertEqual(state["progress"], sorted(state["progress"]))
        self.assertIn("5 previews", self.driver.find_element("id", "track-status").text)

    def test_the_beside_track_drives_the_page(self):
        scrubber = self.open_watch(SERVER.url + "watch/beside.mp4", 30)
        self.assertEqual(self.driver.execute_script("return window.filmstrip.origin"), "beside")
        for t in (4, 20):
            with self.subTest(hover=t):
                self.hover_and_check(scrubber, t, 30, 6)

    def test_an_hls_stream_plays_in_the_browser_with_previews(self):
        # Chromium, like Safari, plays HLS natively.
        self.assertIn(self.driver.execute_script(
            "return document.createElement('video').canPlayType('application/vnd.apple.mpegurl')"), ("maybe", "probably"))
        scrubber = self.open_watch(SERVER.url + "watch/hls/index.m3u8", 6)
        self.assertEqual(self.driver.execute_script("return document.getElementById('video').getAttribute('src')"),
                         "/media/hls/index.m3u8")
        for t in (1, 4.5):
            with self.subTest(hover=t):
                self.hover_and_check(scrubber, t, 6, 2)
        # It plays: the picture advances from the stream's own segments.
        self.driver.execute_script("const v = document.getElementById('video'); v.muted = true; v.play();")
        self.wait(lambda: self.driver.execute_script("return document.getElementById('video').currentTime") > 1, 30,
                  "the stream did not play")
        paths = [urllib.parse.urlparse(url).path for url in self.requested_urls()]
        self.assertTrue(any(path.startswith("/media/hls/index") and path.endswith(".ts") for path in paths), paths)

    def test_a_stream_with_its_own_image_track_scrubs_with_it(self):
        scrubber = self.open_watch(SERVER.url + "watch/hls-own/master.m3u8", 6)
        self.assertEqual(self.driver.execute_script("return window.filmstrip.origin"), "stream")
        self.assertEqual(self.driver.execute_script("return window.filmstrip.cues.length"), 2)
        for t in (1, 4.5):
            with self.subTest(hover=t):
                self.hover_and_check(scrubber, t, 6, 3)

    def test_a_dash_stream_shows_its_poster_and_scrubs_its_previews(self):
        self.driver.get(SERVER.url + "watch/dash/manifest.mpd")
        self.wait(lambda: self.driver.execute_script(
            "return document.getElementById('track-status').dataset.state === 'ready'"), message="no track")
        video = self.driver.find_element("id", "video")
        self.assertIsNone(video.get_attribute("src") or None, "DASH is not handed to the browser")
        self.assertIn("/api/thumbnail?src=dash%2Fmanifest.mpd&t=0", video.get_attribute("poster"))
        self.assertIn("DASH", self.driver.find_element("class name", "hint").text)
        status, headers, body = SERVER.raw("/api/thumbnail?src=dash%2Fmanifest.mpd&t=0")
        self.assertEqual((status, headers.get("content-type")), (200, "image/jpeg"))
        scrubber = self.driver.find_element("id", "scrubber")
        for t in (1, 4.5):
            with self.subTest(hover=t):
                self.hover_and_check(scrubber, t, 6, 2)

    def test_the_page_written_to_disk_scrubs_from_file_without_requests_elsewhere(self):
        folder = os.path.join(WORK, "page")
        subprocess.run([BIN, "page", os.path.join(LIBRARY, "ramp.mp4"), "--output", folder], check=True,
                       stdout=subprocess.DEVNULL)
        self.driver.get_log("performance")
        scrubber = self.open_watch("file://" + os.path.join(folder, "index.html"), 60)
        for t in (3, 33):
            with self.subTest(hover=t):
                self.hover_and_check(scrubber, t, 60, 2)
        urls = self.requested_urls()
        self.assertTrue(urls)
        for url in urls:
            self.assertTrue(url.startswith("file://" + folder + "/") or url.startswith("data:"), url)


if __name__ == "__main__":
    unittest.main()
