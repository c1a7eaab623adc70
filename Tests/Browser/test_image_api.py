"""Image URLs of `filmstrip serve` (Mux's scheme: `/{id}/thumbnail.{jpg,png,webp}` and `/videos.json`), end to end
over raw HTTP against the real server. The test video codes everything in its pixels: the left half red, the top
half green (so flips and turns show in the corners), and blue 2.5 x the frame number (so the exact frame shows).

Run: FILMSTRIP_BIN=.build/debug/filmstrip python3 -m unittest discover -s Tests/Browser -p test_image_api.py -v
"""
import base64
import io
import json
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time
import unittest

sys.path.insert(0, os.path.dirname(__file__))
import png  # noqa: E402
from PIL import Image  # noqa: E402
from test_serve import BIN, Server  # noqa: E402

RED, GREEN = 230, 230


def make(path, filter_graph, seconds, keyframe_every=50):
    subprocess.run(
        ["ffmpeg", "-v", "error", "-y", "-f", "lavfi", "-i", f"nullsrc=s=320x180:r=25:d={seconds},{filter_graph}",
         "-c:v", "libx264", "-g", str(keyframe_every), "-keyint_min", str(keyframe_every), "-sc_threshold", "0",
         "-pix_fmt", "yuv420p", "-movflags", "+faststart", path],
        check=True)


QUADRANTS = "format=rgb24,geq=r='if(lt(X,W/2),230,20)':g='if(lt(Y,H/2),230,20)':b='2.5*N'"


def setUpModule():
    global WORK, SERVER
    WORK = tempfile.mkdtemp(prefix="filmstrip-image-api-")
    library = os.path.join(WORK, "library")
    os.makedirs(os.path.join(library, "shows"))
    make(os.path.join(library, "shows", "quad.mp4"), QUADRANTS, 4)
    # Two seconds of black, then the quadrants: the poster must skip the black opening.
    make(os.path.join(library, "opens black.mp4"),
         "format=rgb24,geq=r='if(lt(T,2),0,if(lt(X,W/2),230,20))':g='if(lt(T,2),0,if(lt(Y,H/2),230,20))':b='0'", 6,
         keyframe_every=25)
    # Flat grey but for a fine checker over the right third: the busiest part of the picture.
    make(os.path.join(library, "detail.mp4"),
         "format=gray,geq=lum='if(gt(X,W*2/3),if(mod(floor(X/4)+floor(Y/4),2),235,16),128)',format=yuv420p", 2)
    SERVER = Server([library], os.path.join(WORK, "cache"))


def tearDownModule():
    SERVER.stop()
    shutil.rmtree(WORK, ignore_errors=True)


def pixels(body):
    """(width, height, pixel(x, y) -> (r, g, b)) of a PNG."""
    width, height, channels, rows = png.decode(body)
    return width, height, lambda x, y: tuple(rows[y][x * channels:x * channels + 3])


def near(colour, expected, tolerance=24):
    return all(abs(a - b) <= tolerance for a, b in zip(colour, expected))


def published_seconds(playlist):
    """The end of the last segment a live media playlist lists, from its first (every segment is kept)."""
    with open(playlist) as f:
        return sum(float(line[8:].split(",")[0]) for line in f if line.startswith("#EXTINF:"))


class LiveImages(unittest.TestCase):
    """`latest=true` on a live HLS stream the ffmpeg CLI writes into the library during the test: blue is ten times
    the second of the frame, so each image tells which moment it shows."""

    def test_latest_is_the_frame_at_the_live_edge(self):
        folder = tempfile.mkdtemp(prefix="filmstrip-image-api-live-")
        live = os.path.join(folder, "live")
        os.makedirs(live)
        playlist = os.path.join(live, "cam.m3u8")
        origin = subprocess.Popen(
            ["ffmpeg", "-v", "error", "-nostdin", "-re", "-f", "lavfi", "-i",
             "nullsrc=s=320x180:r=25:d=20,format=rgb24,geq=r='20':g='20':b='10*T'", "-c:v", "libx264", "-g", "25",
             "-keyint_min", "25", "-sc_threshold", "0", "-pix_fmt", "yuv420p", "-f", "hls", "-hls_time", "1",
             "-hls_list_size", "0", playlist])
        server = Server([folder], os.path.join(folder, "cache"))
        try:
            deadline = time.time() + 30
            while (not os.path.exists(playlist) or published_seconds(playlist) < 3) and time.time() < deadline:
                time.sleep(0.1)
            seen = []
            for query in ("latest=true&width=160", "latest=true", ""):
                before = published_seconds(playlist)
                status, fields, body = server.raw(f"/live/cam.m3u8/thumbnail.png?{query}")
                after = published_seconds(playlist)
                self.assertEqual(status, 200, body[:300])
                self.assertEqual(fields["cache-control"], "public, max-age=2")
                _, _, at = pixels(body)
                shown = at(5, 5)[2] / 10
                # The last frame of the last segment listed when it was asked (H.264 keeps blue within 2 levels).
                self.assertTrue(before - 0.35 <= shown <= after + 0.25, f"{query}: {shown} s, edge {before}..{after}")
                seen.append(shown)
                # The next request after the playlist has grown (however slowly the machine lets ffmpeg write).
                deadline = time.time() + 60
                while published_seconds(playlist) <= after and time.time() < deadline:
                    time.sleep(0.1)
            self.assertTrue(seen[0] < seen[1] < seen[2], seen)
            status, _, body = server.raw("/live/cam.m3u8/thumbnail.png?time=1")
            self.assertEqual(status, 400, body[:300])
            self.assertIn("latest=true", json.loads(body)["error"]["messages"][0])
            self.assertEqual(server.raw("/live/cam.m3u8/animated.gif")[0], 501)
        finally:
            origin.terminate()
            origin.wait()
            server.stop()
            shutil.rmtree(folder, ignore_errors=True)


class Origin:
    """A loopback HTTP origin serving a folder, with a log of the paths asked."""

    def __init__(self, folder):
        import functools
        import http.server
        log = self.log = []

        class Handler(http.server.SimpleHTTPRequestHandler):
            def do_GET(self):
                log.append(self.path)
                super().do_GET()

            def log_message(self, *args):
                pass

        self.server = http.server.ThreadingHTTPServer(
            ("127.0.0.1", 0), functools.partial(Handler, directory=folder))
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/"

    def stop(self):
        self.server.shutdown()
        self.server.server_close()


class RemoteStreams(unittest.TestCase):
    """A streams list naming an HLS stream on a loopback origin: image URLs for it, and the address policy."""

    def test_a_listed_stream_has_image_urls_and_a_private_address_is_refused(self):
        folder = tempfile.mkdtemp(prefix="filmstrip-image-api-remote-")
        site = os.path.join(folder, "site")
        os.makedirs(site)
        subprocess.run(
            ["ffmpeg", "-v", "error", "-y", "-i", os.path.join(WORK, "library", "shows", "quad.mp4"), "-c", "copy",
             "-f", "hls", "-hls_time", "1", "-hls_playlist_type", "vod", os.path.join(site, "quad.m3u8")],
            check=True)
        origin = Origin(site)
        streams = os.path.join(folder, "streams.txt")
        with open(streams, "w") as f:
            f.write(f"# remote streams\n\nremote/quad {origin.url}quad.m3u8\n")
        empty = os.path.join(folder, "empty")
        os.makedirs(empty)
        allowed = Server([empty], os.path.join(folder, "cache"), "--streams", streams, "--allow-private-addresses")
        refused = Server([empty], os.path.join(folder, "cache2"), "--streams", streams)
        try:
            listed = allowed.get_json("/videos.json")["videos"]
            self.assertEqual([(v["id"], v["kind"]) for v in listed], [("remote/quad", "vod")])
            self.assertAlmostEqual(listed[0]["duration"], 4, delta=0.1)
            origin.log.clear()
            status, _, body = allowed.raw("/remote/quad/thumbnail.png?time=2.5&width=160")
            self.assertEqual(status, 200, body[:300])
            _, _, at = pixels(body)
            self.assertTrue(near(at(10, 10), (RED, GREEN, 2.5 * 62), 10), at(10, 10))
            # The playlist and the segment that holds 2.5 s, nothing more.
            segments = [p for p in origin.log if p.endswith(".ts")]
            self.assertEqual(len(segments), 1, origin.log)
            status, _, body = allowed.raw("/remote/quad/animated.gif?start=1&end=2&fps=2")
            self.assertEqual(status, 200, body[:300])
            self.assertEqual(allowed.raw("/remote/quad/storyboard.json")[0], 200)
            # Pages, /api/ and /media/ are the folders' only.
            self.assertEqual(allowed.raw("/watch/remote/quad")[0], 404)
            self.assertEqual(allowed.raw("/media/remote/quad")[0], 404)
            # On loopback, without --allow-private-addresses: refused before anything is fetched.
            origin.log.clear()
            status, fields, body = refused.raw("/remote/quad/thumbnail.jpg?time=1")
            self.assertEqual((status, fields.get("content-type")), (403, "application/json"), body[:300])
            self.assertIn("loopback", json.loads(body)["error"]["messages"][0])
            self.assertEqual(origin.log, [])
            # A malformed list stops the server before it starts, naming the line.
            for text, says in [("a http://x/a.m3u8\nb\n", "line 2"), ("a file:///etc/passwd\n", "http or https"),
                               ("../a http://x/a.m3u8\n", "ordinary")]:
                with open(streams, "w") as f:
                    f.write(text)
                ran = subprocess.run([BIN, "serve", empty, "--port", "0", "--streams", streams],
                                     capture_output=True, text=True, timeout=60)
                self.assertNotEqual(ran.returncode, 0)
                self.assertIn(says, ran.stderr)
        finally:
            allowed.stop()
            refused.stop()
            origin.stop()
            shutil.rmtree(folder, ignore_errors=True)


class ImageURLs(unittest.TestCase):
    def get(self, target, headers=(), method="GET"):
        return SERVER.raw(target, method=method, headers=headers)

    def image(self, query, video="shows/quad.mp4"):
        status, fields, body = self.get(f"/{video}/thumbnail.png?{query}")
        self.assertEqual(status, 200, body[:300])
        self.assertEqual(fields["content-type"], "image/png")
        return pixels(body)

    def corners(self, query):
        """The colours 10 pixels in from each corner: top left, top right, bottom left, bottom right."""
        w, h, at = self.image(query)
        return [at(10, 10)[:2], at(w - 11, 10)[:2], at(10, h - 11)[:2], at(w - 11, h - 11)[:2]]

    def test_videos_json_lists_every_video_by_its_id(self):
        status, fields, body = self.get("/videos.json")
        self.assertEqual((status, fields["content-type"]), (200, "application/json"))
        videos = {v["id"]: v for v in json.loads(body)["videos"]}
        self.assertEqual(set(videos), {"shows/quad.mp4", "opens%20black.mp4", "detail.mp4"})
        self.assertEqual((videos["shows/quad.mp4"]["kind"], videos["shows/quad.mp4"]["name"]), ("vod", "quad.mp4"))
        self.assertAlmostEqual(videos["shows/quad.mp4"]["duration"], 4, delta=0.05)
        status, fields, rest = self.get("/videos.json", method="HEAD")
        self.assertEqual((status, rest, int(fields["content-length"])), (200, b"", len(body)))

    def test_time_is_the_exact_frame_not_the_keyframe_before(self):
        # Keyframes at 0 and 2 s; frame N shows blue 2.5 N.
        for t in (0.0, 1.36, 2.0, 3.52):
            w, h, at = self.image(f"time={t}")
            self.assertEqual((w, h), (320, 180))
            # Read where red and green are low (the bottom right quarter), so the blue is the code alone.
            frame = at(3 * w // 4, 3 * h // 4)[2] / 2.5
            self.assertLessEqual(abs(frame - t * 25), 1.2, f"time={t}: the picture is frame {frame:.1f}")

    def test_flips_and_turns(self):
        top_left, top_right, bottom_left, bottom_right = (RED, GREEN), (20, GREEN), (RED, 20), (20, 20)
        self.assertTrue(all(map(near, self.corners("time=1"), [top_left, top_right, bottom_left, bottom_right])))
        cases = {
            "flip_h=true": [top_right, top_left, bottom_right, bottom_left],
            "flip_v=true": [bottom_left, bottom_right, top_left, top_right],
            "rotate=90": [bottom_left, top_left, bottom_right, top_right],
            "rotate=180": [bottom_right, bottom_left, top_right, top_left],
            "rotate=270": [top_right, bottom_right, top_left, bottom_left],
        }
        for query, expected in cases.items():
            found = self.corners("time=1&" + query)
            self.assertTrue(all(map(near, found, expected)), f"{query}: {found} instead of {expected}")
        # Flips come after the turn, as Mux makes them: turned a quarter, then mirrored left to right.
        found = self.corners("time=1&rotate=90&flip_h=true")
        self.assertTrue(all(map(near, found, [top_left, bottom_left, top_right, bottom_right])), found)
        # A quarter turn is made before the size: 90 px wide of a portrait picture is 160 high.
        w, h, _ = self.image("time=1&rotate=90&width=90")
        self.assertEqual((w, h), (90, 160))

    def test_sizes_and_fit_modes(self):
        self.assertEqual(self.image("time=1&width=160")[:2], (160, 90))
        self.assertEqual(self.image("time=1&height=90")[:2], (160, 90))
        # A 16:9 picture into a 200 x 200 box.
        w, h, at = self.image("time=1&width=200&height=200")
        self.assertEqual((w, h), (200, 113), "preserve fits inside")
        w, h, at = self.image("time=1&width=200&height=200&fit_mode=stretch")
        self.assertEqual((w, h), (200, 200))
        self.assertTrue(near(at(10, 90)[:2], (RED, GREEN)) and near(at(10, 110)[:2], (RED, 20)), "stretched tall")
        w, h, at = self.image("time=1&width=200&height=200&fit_mode=pad")
        self.assertEqual((w, h), (200, 200))
        self.assertTrue(near(at(100, 20), (0, 0, 0), 8) and near(at(100, 180), (0, 0, 0), 8), "black bands")
        self.assertTrue(near(at(10, 60)[:2], (RED, GREEN)), "the picture between them")
        w, h, at = self.image("time=1&width=200&height=200&fit_mode=crop")
        self.assertEqual((w, h), (200, 200))
        # Scaled to 356 x 200 and cut 78 px in from each side: both halves still show, each 100 px wide.
        self.assertTrue(near(at(90, 50)[:2], (RED, GREEN)) and near(at(110, 50)[:2], (20, GREEN)), "centred cut")

    def test_smartcrop_cuts_around_the_detail(self):
        def textured_columns(query):
            w, h, at = self.image(query, video="detail.mp4")
            self.assertEqual((w, h), (180, 180))
            return sum(1 for x in range(w) if len({at(x, y)[0] // 64 for y in range(0, h, 3)}) > 1)
        # 107 of 320 columns carry the checker: a 180-wide cut holds all of them when placed right, 37 when centred.
        smart = textured_columns("time=1&width=180&height=180&fit_mode=smartcrop")
        centred = textured_columns("time=1&width=180&height=180&fit_mode=crop")
        self.assertGreaterEqual(smart, 95, "smartcrop")
        self.assertLessEqual(centred, 45, "crop")

    def test_the_poster_skips_a_black_opening(self):
        status, fields, body = self.get("/opens%20black.mp4/thumbnail.png")
        self.assertEqual(status, 200, body[:300])
        self.assertEqual(fields["cache-control"], "public, max-age=3600")
        _, _, at = pixels(body)
        self.assertTrue(near(at(10, 10)[:2], (RED, GREEN)), f"the poster is {at(10, 10)}")
        # The poster is its time's frame: the same bytes and the same ETag (which so follows the choice of poster),
        # kept an hour rather than a year.
        keyframe = 2.0
        status, timed, same = self.get(f"/opens%20black.mp4/thumbnail.png?time={keyframe}")
        self.assertEqual((status, same, timed["etag"]), (200, body, fields["etag"]))

    def test_formats(self):
        for name, mime, magic in (("jpg", "image/jpeg", b"\xff\xd8\xff"), ("webp", "image/webp", b"RIFF")):
            status, fields, body = self.get(f"/shows/quad.mp4/thumbnail.{name}?time=1&width=64")
            self.assertEqual((status, fields["content-type"], body[:len(magic)]), (200, mime, magic))
        self.assertEqual(self.get("/shows/quad.mp4/thumbnail.gif?time=1")[0], 404)

    def frames(self, query, kind="gif"):
        """The frames of an animation as Pillow decodes them: (size, [(duration ms, pixel(x, y))])."""
        status, fields, body = self.get(f"/shows/quad.mp4/animated.{kind}?{query}")
        self.assertEqual(status, 200, body[:300])
        self.assertEqual(fields["content-type"], f"image/{kind}")
        self.assertEqual(fields["cache-control"], "public, max-age=31536000, immutable")
        image = Image.open(io.BytesIO(body))
        frames = []
        for n in range(image.n_frames):
            image.seek(n)
            rgb = image.convert("RGB")
            frames.append((image.info["duration"], lambda x, y, rgb=rgb: rgb.getpixel((x, y))))
        return image.size, frames

    def test_animations_show_the_exact_frames_at_their_rate(self):
        for kind in ("gif", "webp"):
            # 1 s to 2 s at 10 a second, 160 wide: frames 25, 27.5, 30 … of the video (blue 2.5 x the number).
            size, frames = self.frames("start=1&end=2&fps=10&width=160", kind)
            self.assertEqual(size, (160, 90), kind)
            # A GIF holds every frame; libwebp joins a frame to the one before when a lossy coder could not tell
            # them apart (its duration then covers both), so the check is the picture shown at each frame's time.
            self.assertEqual(len(frames), 10) if kind == "gif" else self.assertLessEqual(len(frames), 10)
            shown, end = [], 0
            for duration, at in frames:
                shown += [at] * (duration // 100)
                end += duration
            self.assertEqual((end, len(shown)), (1000, 10), kind)
            for k, at in enumerate(shown):
                number = int(25 + k * 2.5)
                self.assertTrue(near(at(10, 10), (RED, GREEN, 2.5 * number), 10), f"{kind} frame {k}: {at(10, 10)}")
                self.assertTrue(near(at(150, 80), (20, 20, 2.5 * number), 10), f"{kind} frame {k}: {at(150, 80)}")
            # Defaults: from 0 for 5 s (the video is 4 s long: to its end), 15 a second, 320 wide.
            size, frames = self.frames("", kind)
            self.assertEqual((size, sum(d for d, _ in frames)), ((320, 180), 4000), kind)
            # 30 a second: GIF delays of 3 and 4 hundredths that keep the total; WebP's 33 and 34 ms.
            _, frames = self.frames("start=0.5&end=1.5&fps=30&height=90", kind)
            self.assertEqual(sum(d for d, _ in frames), 1000, kind)
            if kind == "gif":
                self.assertEqual(len(frames), 30)
        # One span of video decoded once per animation, and a repeat made from the cache.
        before = SERVER.get_json("/api/status")["images"]["rendered"]
        self.frames("start=2&end=3.5&fps=5")
        self.frames("start=2&end=3.5&fps=5")
        self.assertEqual(SERVER.get_json("/api/status")["images"]["rendered"], before + 1)

    def test_animation_limits(self):
        for query, names in [
            ("fps=1000", ["fps"]), ("fps=0", ["fps"]), ("start=1&end=11.5", ["end"]), ("start=2&end=1", ["end"]),
            ("width=641", ["width"]), ("height=0&start=-1", ["start", "height"]), ("start=4.5", ["start"]),
            ("end=NaN", ["end"]),
        ]:
            status, fields, body = self.get(f"/shows/quad.mp4/animated.webp?{query}")
            self.assertEqual((status, fields.get("content-type")), (400, "application/json"), f"{query}: {body[:200]}")
            messages = json.loads(body)["error"]["messages"]
            for name in names:
                self.assertTrue(any(m.startswith(name) for m in messages), f"{query}: {messages}")
        self.assertEqual(self.get("/shows/nothing.mp4/animated.gif")[0], 404)

    def test_etag_304_head_and_cache_control(self):
        target = "/shows/quad.mp4/thumbnail.jpg?time=2.5&width=120"
        status, fields, body = self.get(target)
        self.assertEqual(status, 200)
        self.assertEqual(fields["cache-control"], "public, max-age=31536000, immutable")
        etag = fields["etag"]
        self.assertTrue(etag.startswith('"') and etag.endswith('"'), etag)
        status, again, rest = self.get(target, headers=[f"If-None-Match: {etag}"])
        self.assertEqual((status, rest, again["etag"]), (304, b"", etag))
        self.assertEqual(self.get(target, headers=['If-None-Match: "other"'])[0], 200)
        status, head, rest = self.get(target, method="HEAD")
        self.assertEqual((status, rest, int(head["content-length"]), head["etag"]), (200, b"", len(body), etag))
        # Other parameters, another tag; the same parameters written another way, the same one.
        self.assertNotEqual(self.get(target + "&flip_h=true")[1]["etag"], etag)
        self.assertEqual(self.get("/shows/quad.mp4/thumbnail.jpg?width=120&time=2.50")[1]["etag"], etag)

    def test_identical_requests_at_once_share_one_decode(self):
        before = SERVER.get_json("/api/status")["images"]["rendered"]
        target = "/shows/quad.mp4/thumbnail.jpg?time=3.04&width=300&height=100&fit_mode=crop"
        results = []
        threads = [threading.Thread(target=lambda: results.append(self.get(target))) for _ in range(8)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        self.assertEqual({r[0] for r in results}, {200})
        self.assertEqual(len({r[2] for r in results}), 1)
        self.assertEqual(SERVER.get_json("/api/status")["images"]["rendered"], before + 1)

    def test_a_storyboard_that_fails_is_not_generated_again_at_once(self):
        broken = os.path.join(WORK, "library", "broken.mp4")
        with open(broken, "wb") as f:
            f.write(b"\0\0\0\x18ftypisom" + os.urandom(4000))
        try:
            generated = SERVER.get_json("/api/status")["images"]["storyboards"]
            first = self.get("/broken.mp4/storyboard.json")
            second = self.get("/broken.mp4/storyboard.vtt")
            self.assertEqual(first[1]["content-type"], "application/json")
            self.assertTrue(400 <= first[0] < 600 and first[0] == second[0], (first[0], second[0], first[2][:200]))
            self.assertEqual(json.loads(first[2])["error"], json.loads(second[2])["error"])
            # One generation tried, its failure remembered for the second request.
            self.assertEqual(SERVER.get_json("/api/status")["images"]["storyboards"], generated + 1)
        finally:
            os.remove(broken)

    def test_storyboard_json_vtt_and_image(self):
        status, fields, body = self.get("/shows/quad.mp4/storyboard.json")
        self.assertEqual((status, fields["content-type"]), (200, "application/json"), body[:300])
        board = json.loads(body)
        self.assertEqual(board["url"], "/shows/quad.mp4/storyboard.jpg")
        self.assertAlmostEqual(board["duration"], 4, delta=0.05)
        tiles = board["tiles"]
        self.assertEqual([t["start"] for t in tiles], [0, 2])
        status, fields, png_body = self.get("/shows/quad.mp4/storyboard.png")
        self.assertEqual(status, 200)
        width, height, at = pixels(png_body)
        tw, th = board["tile_width"], board["tile_height"]
        self.assertTrue(all(t["x"] + tw <= width and t["y"] + th <= height for t in tiles), (width, height, tiles))
        for tile in tiles:
            # The bottom right quarter of each tile: blue 2.5 x the frame number of the tile's start.
            blue = at(tile["x"] + 3 * tw // 4, tile["y"] + 3 * th // 4)[2]
            self.assertLessEqual(abs(blue / 2.5 - tile["start"] * 25), 2, f"tile at {tile['start']} s: blue {blue}")
        status, fields, jpeg = self.get("/shows/quad.mp4/storyboard.jpg")
        self.assertEqual((status, fields["content-type"], jpeg[:3]), (200, "image/jpeg", b"\xff\xd8\xff"))
        status, fields, vtt = self.get("/shows/quad.mp4/storyboard.vtt")
        self.assertEqual((status, fields["content-type"]), (200, "text/vtt; charset=utf-8"))
        text = vtt.decode()
        self.assertTrue(text.startswith("WEBVTT\n"), text)
        self.assertIn(f"00:00:00.000 --> 00:00:02.000\n/shows/quad.mp4/storyboard.jpg#xywh=0,0,{tw},{th}", text)
        self.assertIn("--> 00:00:04.000\n", text)
        # Kept: the same answer again, with a 304 for its tag, and no second generation.
        generated = SERVER.get_json("/api/status")["images"]["storyboards"]
        again = self.get("/shows/quad.mp4/storyboard.json", headers=[f"If-None-Match: {fields['etag']}"])
        self.assertEqual(again[0], 200, "another route, another tag")
        self.assertEqual(self.get("/shows/quad.mp4/storyboard.vtt", headers=[f"If-None-Match: {fields['etag']}"])[0],
                         304)
        self.assertEqual(SERVER.get_json("/api/status")["images"]["storyboards"], generated)

    def test_a_second_server_on_the_same_cache_serves_from_disk(self):
        target = "/shows/quad.mp4/thumbnail.webp?time=0.72&width=100"
        status, fields, body = self.get(target)
        self.assertEqual(status, 200)
        second = Server([os.path.join(WORK, "library")], os.path.join(WORK, "cache"))
        try:
            again = second.raw(target)
            self.assertEqual((again[0], again[2], again[1]["etag"]), (200, body, fields["etag"]))
            self.assertEqual(second.get_json("/api/status")["images"]["rendered"], 0)
        finally:
            second.stop()

    def test_hostile_requests_get_their_status_and_a_json_error(self):
        cases = [
            ("/shows/quad.mp4/thumbnail.jpg?width=1e9", 400, "width"),
            ("/shows/quad.mp4/thumbnail.jpg?time=NaN", 400, "time"),
            ("/shows/quad.mp4/thumbnail.jpg?time=-1", 400, "time"),
            ("/shows/quad.mp4/thumbnail.jpg?time=99", 400, "time"),
            ("/shows/quad.mp4/thumbnail.jpg?height=0", 400, "height"),
            ("/shows/quad.mp4/thumbnail.jpg?fit_mode=zoom", 400, "fit_mode"),
            ("/shows/quad.mp4/thumbnail.jpg?rotate=45", 400, "rotate"),
            ("/shows/quad.mp4/thumbnail.jpg?flip_h=yes", 400, "flip_h"),
            ("/shows/quad.mp4/thumbnail.jpg?latest=true", 400, "latest"),
            ("/shows/quad.mp4/thumbnail.jpg?time=1&x=" + "a" * 10_000, 414, "query"),
            ("/shows/nothing.mp4/thumbnail.jpg", 404, "no video"),
            ("/shows/..%2F..%2Fetc%2Fpasswd/thumbnail.jpg", 403, ""),
            ("/shows/../../etc/passwd/thumbnail.jpg", 403, ""),
            ("/%2e%2e/thumbnail.jpg", 403, ""),
        ]
        for target, expected, named in cases:
            status, fields, body = self.get(target)
            self.assertEqual(status, expected, f"{target[:80]}: {body[:200]}")
            if status in (400, 403, 404, 414) and fields.get("content-type") == "application/json":
                error = json.loads(body)["error"]
                self.assertTrue(any(named in m for m in error["messages"]), f"{target[:80]}: {error}")
        # A token on a server that checks none is refused, not ignored.
        status, _, body = self.get("/shows/quad.mp4/thumbnail.jpg?time=1&token=a.b.c")
        self.assertEqual(status, 403, body[:200])
        # Bound to loopback, other sites' pages get nothing (no decode started for them).
        status, _, _ = self.get("/shows/quad.mp4/thumbnail.jpg?time=1.6", headers=["Sec-Fetch-Site: cross-site"])
        self.assertEqual(status, 403)
        self.assertEqual(self.get("/shows/quad.mp4/thumbnail.jpg?time=1.6",
                                  headers=["Sec-Fetch-Site: same-site"])[0], 200)
        # Several bad parameters: each is named.
        status, _, body = self.get("/shows/quad.mp4/thumbnail.jpg?width=-3&rotate=1")
        messages = json.loads(body)["error"]["messages"]
        self.assertEqual((status, len(messages)), (400, 2), messages)
        # The server lives on.
        self.assertEqual(self.get("/shows/quad.mp4/thumbnail.jpg?time=1&width=32")[0], 200)


def b64(data):
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


class SignedURLs(unittest.TestCase):
    """`serve --signing-key KID=PEM --require-signed`: tokens made here with the openssl CLI (RS256)."""

    @classmethod
    def setUpClass(cls):
        cls.folder = os.path.join(WORK, "keys")
        os.makedirs(cls.folder, exist_ok=True)
        for name in ("signer", "stranger"):
            private = os.path.join(cls.folder, name + ".pem")
            subprocess.run(["openssl", "genrsa", "-out", private, "2048"], check=True, capture_output=True)
            subprocess.run(["openssl", "rsa", "-in", private, "-pubout", "-out", private + ".pub"], check=True,
                           capture_output=True)
        cls.server = Server([os.path.join(WORK, "library")], os.path.join(WORK, "cache-signed"),
                            "--signing-key", "k1=" + os.path.join(cls.folder, "signer.pem.pub"), "--require-signed")

    @classmethod
    def tearDownClass(cls):
        cls.server.stop()

    def token(self, claims, header=None, key="signer", signature=None):
        header = header or {"alg": "RS256", "kid": "k1", "typ": "JWT"}
        signed = b64(json.dumps(header).encode()) + "." + b64(json.dumps(claims).encode())
        if signature is None:
            made = subprocess.run(["openssl", "dgst", "-sha256", "-sign", os.path.join(self.folder, key + ".pem")],
                                  input=signed.encode(), check=True, capture_output=True).stdout
            signature = b64(made)
        return signed + "." + signature

    def claims(self, **extra):
        return {"sub": "shows/quad.mp4", "aud": "t", "exp": int(time.time()) + 600, **extra}

    def test_a_signed_url_is_made_from_its_claims(self):
        token = self.token(self.claims(time=1, width=64, rotate=90))
        # The URL's own width is ignored: the token says 64 wide, turned a quarter (64 x 114).
        status, fields, body = self.server.raw(f"/shows/quad.mp4/thumbnail.png?width=300&token={token}")
        self.assertEqual(status, 200, body[:300])
        # Kept by caches no longer than the token lives (600 s), not a year.
        age = int(fields["cache-control"].split("max-age=")[1])
        self.assertTrue(590 <= age <= 600 and "immutable" not in fields["cache-control"], fields["cache-control"])
        width, height, _, _ = png.decode(body)
        self.assertEqual((width, height), (64, 114))

    def test_a_signed_storyboard(self):
        token = self.token(dict(self.claims(), aud="s"))
        status, _, body = self.server.raw(f"/shows/quad.mp4/storyboard.json?token={token}")
        self.assertEqual(status, 200, body[:300])
        url = json.loads(body)["url"]
        self.assertEqual(url, f"/shows/quad.mp4/storyboard.jpg?token={token}")
        self.assertEqual(self.server.raw(url)[0], 200)

    def test_a_signed_animation(self):
        token = self.token(dict(self.claims(start=1, end=1.5, fps=4), aud="g"))
        status, _, body = self.server.raw(f"/shows/quad.mp4/animated.gif?fps=30&token={token}")
        self.assertEqual(status, 200, body[:300])
        self.assertEqual(Image.open(io.BytesIO(body)).n_frames, 2)
        # A thumbnail's token does not open an animation.
        status, _, body = self.server.raw(f"/shows/quad.mp4/animated.gif?token={self.token(self.claims())}")
        self.assertEqual(status, 403, body[:300])

    def test_every_bad_token_is_403(self):
        good = self.claims(time=1)
        header, claims, signature = self.token(good).split(".")
        tampered = b64(json.dumps(dict(good, time=2)).encode())
        cases = {
            "unsigned": "",
            "expired": self.token(dict(good, exp=int(time.time()) - 5)),
            "tampered": f"{header}.{tampered}.{signature}",
            "wrong kid": self.token(good, header={"alg": "RS256", "kid": "k2"}),
            "wrong aud": self.token(dict(good, aud="s")),
            "another video": self.token(dict(good, sub="opens%20black.mp4")),
            "alg none": self.token(good, header={"alg": "none", "kid": "k1"}, signature=""),
            "another key": self.token(good, key="stranger"),
            "HS256": self.token(good, header={"alg": "HS256", "kid": "k1"}),
            "a thumbnail's token for a storyboard": ("storyboard", self.token(good)),
        }
        for name, token in cases.items():
            route, token = token if isinstance(token, tuple) else ("thumbnail", token)
            query = f"?token={token}" if token else "?time=1"
            status, fields, body = self.server.raw(f"/shows/quad.mp4/{route}.jpg{query}")
            self.assertEqual((status, fields.get("content-type")), (403, "application/json"), f"{name}: {body[:200]}")
            self.assertEqual(json.loads(body)["error"]["type"], "forbidden", name)


if __name__ == "__main__":
    unittest.main()
