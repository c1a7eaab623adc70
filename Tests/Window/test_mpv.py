"""Extras/mpv/filmstrip.lua in Debian's mpv on a virtual screen (Xvfb): xdotool hovers the on-screen controller's seek
bar at five places and the preview drawn above it must show the frame of that time, for a local file (its keyframe
index), an HLS stream over loopback HTTP with 50 ms added before every answer (its I-frame playlist, one range request
per preview), an HLS stream with an image track (`generate --attach`), and one with Apple's I-frame image sequence
alone.

The video is a saturated hue turned 6 degrees a second, with a keyframe every second; the image track samples every
2 s. Where the pointer is, the time it stands for is taken from the default controller's layout (the seek bar from
234 to width - 406 of its 720-line canvas, 2 units inside each end); the hovered places are in the middle of a
keyframe's second, so the expected keyframe is never a boundary case. The preview's colour is matched against the
ffmpeg CLI's own decode of every keyframe: the nearest must be the expected one.

Run: FILMSTRIP_BIN=.build/release/filmstrip python3 -m unittest Tests/Window/test_mpv.py -v
FILMSTRIP_MPV_SCREENSHOT=PATH saves the screen with a preview showing (the README's picture).
"""
import colorsys
import os
import shutil
import subprocess
import sys
import tempfile
import time
import unittest

sys.path.insert(0, os.path.dirname(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(__file__)), "Interop"))
import players  # noqa: E402
import screen as screens  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BIN = os.environ.get("FILMSTRIP_BIN") or os.path.join(
    subprocess.check_output(["swift", "build", "--show-bin-path"], cwd=ROOT, text=True).strip(), "filmstrip")
SCRIPT = os.path.join(ROOT, "Extras", "mpv", "filmstrip.lua")
DURATION = 60
FPS = 25
HUE_PER_SECOND = 6
# The default controller's seek bar on a 1280x720 screen (the canvas is the screen): the slider's value runs from
# 236 to 872, in the bottom 30 lines.
SLIDER = (236, 1280 - 408)
BAR_Y = 720 - 15
PREVIEW_W, PREVIEW_H = 240, 135
TIMES = (5.5, 17.5, 29.5, 41.5, 53.5)


def ffmpeg(*arguments):
    subprocess.run(["ffmpeg", "-v", "error", "-y", "-nostdin", *arguments], check=True)


def keyframe_colours(path):
    """The mean colour of the keyframe of each second of `path`, as the ffmpeg CLI decodes it."""
    raw = subprocess.run(["ffmpeg", "-v", "error", "-nostdin", "-i", path, "-vf", f"select='not(mod(n,{FPS}))',"
                          "scale=8:8", "-fps_mode", "passthrough", "-f", "rawvideo", "-pix_fmt", "rgb24", "-"],
                         capture_output=True, check=True).stdout
    return [tuple(sum(raw[i:i + 192][c::3]) / 64 for c in range(3)) for i in range(0, len(raw), 192)]


def setUpModule():
    global WORK, SCREEN, COLOURS, SITE
    WORK = tempfile.mkdtemp(prefix="filmstrip-mpv-")
    hue = os.path.join(WORK, "hue.mp4")
    ffmpeg("-f", "lavfi", "-i", f"color=c=0xFF0000:s=640x360:r={FPS}:d={DURATION},hue=h={HUE_PER_SECOND}*t",
           "-c:v", "libx264", "-preset", "veryfast", "-g", str(FPS), "-keyint_min", str(FPS), "-sc_threshold", "0",
           "-pix_fmt", "yuv420p", "-movflags", "+faststart", hue)
    COLOURS = keyframe_colours(hue)
    # HLS (TS, 4 s segments) with I-frame playlists written by `filmstrip iframes`, and no image track.
    os.makedirs(os.path.join(WORK, "site", "ts"))
    ffmpeg("-i", hue, "-c", "copy", "-f", "hls", "-hls_time", "4", "-hls_playlist_type", "vod", "-master_pl_name",
           "master.m3u8", os.path.join(WORK, "site", "ts", "index.m3u8"))
    subprocess.run([BIN, "iframes", os.path.join(WORK, "site", "ts", "master.m3u8"), "--output",
                    os.path.join(WORK, "site", "ts")], check=True, capture_output=True)
    # The same stream with an image track attached to its master.
    shutil.copytree(os.path.join(WORK, "site", "ts"), os.path.join(WORK, "site", "tracked"))
    subprocess.run([BIN, "generate", os.path.join(WORK, "site", "tracked", "master.m3u8"), "--output",
                    os.path.join(WORK, "site", "tracked", "thumbs"), "--interval", "2", "--attach", "--json"],
                   check=True, capture_output=True)
    # And with Apple's I-frame image sequence alone (its master lists no image playlist).
    shutil.copytree(os.path.join(WORK, "site", "ts"), os.path.join(WORK, "site", "sequence"))
    subprocess.run([BIN, "generate", os.path.join(WORK, "site", "sequence", "master.m3u8"), "--output",
                    os.path.join(WORK, "site", "sequence", "thumbs"), "--interval", "2", "--attach", "--formats",
                    "iframe-images"], check=True, capture_output=True)
    master = os.path.join(WORK, "site", "sequence", "thumbs", "master.m3u8")
    with open(master) as f:
        lines = [line for line in f if not line.startswith("#EXT-X-IMAGE-STREAM-INF")]
    with open(master, "w") as f:
        f.writelines(lines)
    SITE = players.Site(os.path.join(WORK, "site"), delay=0.05)
    SCREEN = screens.Screen()


def tearDownModule():
    SCREEN.stop()
    SITE.stop()
    shutil.rmtree(WORK, ignore_errors=True)


def x_of(t):
    """Where on the screen the controller's seek bar stands for `t`."""
    left, right = SLIDER
    return round(left + (right - left) * t / DURATION)


class Mpv:
    """mpv fullscreen on the screen, paused, with the script and its log at info level."""

    def __init__(self, source):
        env = dict(SCREEN.env, PATH=os.path.dirname(BIN) + os.pathsep + os.environ["PATH"], TMPDIR=WORK)
        self.log = open(os.path.join(WORK, "mpv.log"), "w+")
        self.process = subprocess.Popen(
            ["mpv", "--no-config", "--fs", "--pause", "--vo=x11", "--ao=null", "--script=" + SCRIPT,
             "--script-opts=filmstrip-log=yes", "--msg-level=all=warn,filmstrip=info", source],
            env=env, stdout=self.log, stderr=subprocess.STDOUT)
        deadline = time.time() + 30
        while not SCREEN.xdotool("search", "--class", "mpv").split():
            if time.time() > deadline or self.process.poll() is not None:
                raise AssertionError(f"mpv did not open a window: {self.text()}")
            time.sleep(0.1)
        time.sleep(1)

    def text(self):
        self.log.flush()
        with open(self.log.name) as f:
            return f.read()

    def previews(self):
        """The script's log lines of previews shown, as dictionaries."""
        found = []
        for line in self.text().splitlines():
            if "preview at=" in line:
                found.append(dict(part.split("=", 1) for part in line.split("] ", 1)[1].split() if "=" in part))
        return found

    def hover(self, t):
        """Moves the pointer onto the bar where it stands for `t`, and waits for the preview of that time."""
        x = x_of(t)
        before = len(self.previews())
        SCREEN.xdotool("mousemove", str(x - 3), str(BAR_Y - 2))
        SCREEN.xdotool("mousemove", str(x), str(BAR_Y))
        deadline = time.time() + 30
        while True:
            shown = self.previews()[before:]
            if shown and abs(float(shown[-1]["at"]) - t) < 0.2:
                time.sleep(0.3)  # the overlay is drawn on the next redraw
                return shown[-1]
            if time.time() > deadline:
                raise AssertionError(f"no preview for {t} s: {self.text()[-2000:]}")
            time.sleep(0.05)

    def stop(self):
        self.process.terminate()
        try:
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.process.kill()
        self.log.close()


class ScrubPreviews(unittest.TestCase):
    def check(self, source, expected_engine, step):
        """Hovers the five times and checks each preview's picture: the keyframe at or before the time (`step` the
        track's interval: the image at or before)."""
        mpv = Mpv(source)
        try:
            for t in TIMES:
                shown = mpv.hover(t)
                self.assertEqual(shown["engine"], expected_engine, shown)
                x, y, w, h = (int(shown[k]) for k in ("x", "y", "w", "h"))
                self.assertEqual((w, h), (PREVIEW_W, PREVIEW_H))
                self.assertLess(y + h, BAR_Y - 15, "the preview sits above the controller")
                pixels = SCREEN.grab(x + 20, y + 20, w - 40, h - 40)
                colour = pixels.mean(0, 0, w - 40, h - 40)
                expected = int(t // step * step)
                nearest = min(range(len(COLOURS)), key=lambda k: sum((a - b) ** 2 for a, b in zip(colour, COLOURS[k])))
                hue = colorsys.rgb_to_hsv(*(c / 255 for c in colour))[0] * 360
                self.assertEqual(nearest, expected, f"at {t} s the preview shows hue {hue:.1f} (second {nearest})")
                if t == TIMES[2] and os.environ.get("FILMSTRIP_MPV_SCREENSHOT"):
                    SCREEN.save(os.environ["FILMSTRIP_MPV_SCREENSHOT"])
            return mpv.previews()
        finally:
            mpv.stop()

    def test_local_file(self):
        """A local MP4: the `.frames` engine over its keyframe index."""
        shown = self.check(os.path.join(WORK, "hue.mp4"), "frames", 1)
        self.assertEqual({p["origin"] for p in shown}, {"file-index"})

    def test_hls_over_http(self):
        """HLS over loopback HTTP, 50 ms before each answer: the I-frame playlist, one range request per preview."""
        before = len(SITE.sent)
        shown = self.check(SITE.url + "ts/master.m3u8", "frames", 1)
        self.assertEqual({p["origin"] for p in shown}, {"iframe-playlist"})
        # The script's process fetched no whole segment: its media requests are byte ranges.
        ranges = [s for s in SITE.sent[before:] if s[1] and s[0].endswith(".ts")]
        self.assertTrue(ranges, SITE.sent[before:])

    def test_image_track(self):
        """HLS with an image track attached: the `.tracks` engine, the image at or before the time (2 s apart)."""
        shown = self.check(SITE.url + "tracked/thumbs/master.m3u8", "tracks", 2)
        self.assertEqual({p["origin"] for p in shown}, {"image-track"})

    def test_i_frame_image_sequence(self):
        """HLS whose master lists Apple's I-frame image sequence and no image playlist: each preview one JPEG."""
        shown = self.check(SITE.url + "sequence/thumbs/master.m3u8", "tracks", 2)
        self.assertEqual({p["origin"] for p in shown}, {"image-track"})


if __name__ == "__main__":
    unittest.main()
