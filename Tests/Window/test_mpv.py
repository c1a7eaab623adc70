"""Extras/mpv/filmstrip.lua in Debian's mpv on a virtual screen (Xvfb): xdotool hovers the on-screen controller's seek
bar at five places and the preview drawn above it must show the frame of that time, for a local file (its keyframe
index), an HLS stream over loopback HTTP with 50 ms added before every answer (its I-frame playlist, one range request
per preview), an HLS stream with an image track (`generate --attach`), and one with Apple's I-frame image sequence
alone; then with the controller laid out as a box, and with the script installed as `thumbfast.lua` and driven by a
replacement controller's messages (sent over mpv's JSON IPC).

The video is a saturated hue turned 6 degrees a second, with a keyframe every second; the image track samples every
2 s. Where the pointer is, the time it stands for is taken from the default controller's layout (the seek bar from
234 to width - 406 of its 720-line canvas, 2 units inside each end); the hovered places are in the middle of a
keyframe's second, so the expected keyframe is never a boundary case. The preview's colour is matched against the
ffmpeg CLI's own decode of every keyframe: the nearest must be the expected one.

Run: FILMSTRIP_BIN=.build/release/filmstrip python3 -m unittest Tests/Window/test_mpv.py -v
FILMSTRIP_MPV_SCREENSHOT=PATH saves the screen with a preview showing (the README's picture).
"""
import colorsys
import json
import os
import shutil
import socket
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


# osc.lua's box layout on the same screen (`--script-opts=osc-layout=box`): the box centred, its bottom edge pulled
# 0.8 of the way down (valign), the bar 520 wide at 17 to 32 under the box's centre line (592), the slider 2 inside.
BOX_SLIDER = (640 - 258, 640 + 258)
BOX_BAR_Y = 592 + 24


def x_of(t, slider=SLIDER):
    """Where on the screen the controller's seek bar stands for `t`."""
    left, right = slider
    return round(left + (right - left) * t / DURATION)


class Mpv:
    """mpv fullscreen on the screen, paused, with the script and its log at info level. `script` is the script's path
    (its file name is its name to mpv), `opts` more script options, `extra` more mpv options."""

    def __init__(self, source, script=SCRIPT, opts=(), extra=()):
        env = dict(SCREEN.env, PATH=os.path.dirname(BIN) + os.pathsep + os.environ["PATH"], TMPDIR=WORK)
        self.log = open(os.path.join(WORK, "mpv.log"), "w+")
        name = os.path.splitext(os.path.basename(script))[0]
        self.process = subprocess.Popen(
            ["mpv", "--no-config", "--fs", "--pause", "--vo=x11", "--ao=null", "--script=" + script,
             "--script-opts=" + ",".join(["filmstrip-log=yes", *opts]),
             f"--msg-level=all=warn,{name}=info", *extra, *([source] if source else [])],
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

    def hover(self, t, slider=SLIDER, bar_y=BAR_Y):
        """Moves the pointer onto the bar where it stands for `t`, and waits for the preview of that time."""
        x = x_of(t, slider)
        before = len(self.previews())
        SCREEN.xdotool("mousemove", str(x - 3), str(bar_y - 2))
        SCREEN.xdotool("mousemove", str(x), str(bar_y))
        return self.wait_for(t, before)

    def wait_for(self, t, before):
        """The log line of the preview of `t` shown after the first `before` ones (waiting for it)."""
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


def shown_second(x, y, w, h):
    """The second whose keyframe the screen shows inside (x, y, w, h) (20 pixels in from each edge), and its hue."""
    colour = SCREEN.grab(x + 20, y + 20, w - 40, h - 40).mean(0, 0, w - 40, h - 40)
    nearest = min(range(len(COLOURS)), key=lambda k: sum((a - b) ** 2 for a, b in zip(colour, COLOURS[k])))
    return nearest, colorsys.rgb_to_hsv(*(c / 255 for c in colour))[0] * 360


class Ipc:
    """A client of mpv's JSON IPC socket: commands out, events in."""

    def __init__(self, path):
        deadline = time.time() + 20
        while not os.path.exists(path):
            if time.time() > deadline:
                raise AssertionError(f"mpv made no IPC socket at {path}")
            time.sleep(0.05)
        self.socket = socket.socket(socket.AF_UNIX)
        self.socket.connect(path)
        self.socket.settimeout(0.2)
        self.buffer = b""

    def send(self, *command):
        self.socket.sendall(json.dumps({"command": list(command)}).encode() + b"\n")

    def wait_for_message(self, name, timeout=30):
        """The arguments of the first script message `name` broadcast after now (a `client-message` event)."""
        deadline = time.time() + timeout
        while time.time() < deadline:
            try:
                self.buffer += self.socket.recv(65536)
            except socket.timeout:
                continue
            *lines, self.buffer = self.buffer.split(b"\n")
            for line in lines:
                event = json.loads(line)
                if event.get("event") == "client-message" and event.get("args", [None])[0] == name:
                    return event["args"]
        raise AssertionError(f"no {name} message")

    def close(self):
        self.socket.close()


class ScrubPreviews(unittest.TestCase):
    def check(self, source, expected_engine, step, opts=(), slider=SLIDER, bar_y=BAR_Y, bottom=720 - 54 - 8):
        """Hovers the five times and checks each preview's picture: the keyframe at or before the time (`step` the
        track's interval: the image at or before); each preview's bottom edge at `bottom` (by default 8 units above
        the bottom bar, which is 54 high)."""
        mpv = Mpv(source, opts=opts)
        try:
            for t in TIMES:
                shown = mpv.hover(t, slider, bar_y)
                self.assertEqual(shown["engine"], expected_engine, shown)
                x, y, w, h = (int(shown[k]) for k in ("x", "y", "w", "h"))
                self.assertEqual((w, h), (PREVIEW_W, PREVIEW_H))
                self.assertEqual(y + h, bottom, "the preview sits 8 units above the controller")
                nearest, hue = shown_second(x, y, w, h)
                expected = int(t // step * step)
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

    def test_box_layout(self):
        """The controller laid out as a box (`osc-layout=box`): the bar found where the box puts it, the preview above
        the box (which the controller draws over an overlay)."""
        self.check(os.path.join(WORK, "hue.mp4"), "frames", 1, opts=("osc-layout=box",), slider=BOX_SLIDER,
                   bar_y=BOX_BAR_Y, bottom=592 - 69 - 8)

    def test_thumbnailer_messages(self):
        """Installed as thumbfast.lua, the script speaks the messages controllers such as uosc send a thumbnailer:
        after the file loads it broadcasts `thumbfast-info` (the preview's size), draws the preview of `thumb TIME X
        Y` with its corner at X, Y, and `clear` takes it away. Sent here over mpv's JSON IPC, as a controller would."""
        script = os.path.join(WORK, "thumbfast.lua")
        shutil.copyfile(SCRIPT, script)
        ipc = os.path.join(WORK, "mpv.sock")
        mpv = Mpv(None, script=script, extra=("--idle=yes", "--force-window=yes", "--input-ipc-server=" + ipc))
        try:
            client = Ipc(ipc)
            client.send("loadfile", os.path.join(WORK, "hue.mp4"))
            info = json.loads(client.wait_for_message("thumbfast-info")[1])
            self.assertEqual((info["width"], info["height"], info["disabled"], info["available"]),
                             (PREVIEW_W, PREVIEW_H, False, True), info)
            time.sleep(1)
            for t, x, y in ((29.5, 100, 80), (41.5, 700, 300)):
                before = len(mpv.previews())
                client.send("script-message-to", "thumbfast", "thumb", str(t), str(x), str(y))
                shown = mpv.wait_for(t, before)
                self.assertEqual((int(shown["x"]), int(shown["y"])), (x, y), shown)
                nearest, hue = shown_second(x, y, PREVIEW_W, PREVIEW_H)
                self.assertEqual(nearest, int(t), f"at {t} s the preview shows hue {hue:.1f} (second {nearest})")
            client.send("script-message-to", "thumbfast", "clear")
            time.sleep(0.5)
            # The paused video (its first second) shows where the preview was.
            self.assertEqual(shown_second(700, 300, PREVIEW_W, PREVIEW_H)[0], 0)
            client.close()
        finally:
            mpv.stop()

    def test_controller_set_to_never(self):
        """With the controller's visibility `never` no preview shows over the bar's place. The previews process is
        started first (a preview while the controller is `auto`), so a wrong preview would come within the wait;
        the controller is switched by the message osc.lua takes."""
        ipc = os.path.join(WORK, "mpv-never.sock")
        mpv = Mpv(os.path.join(WORK, "hue.mp4"), extra=("--input-ipc-server=" + ipc,))
        try:
            client = Ipc(ipc)
            shown = mpv.hover(TIMES[0])
            self.assertEqual(int(shown["y"]) + int(shown["h"]), 720 - 54 - 8)
            client.send("script-message", "osc-visibility", "never")
            time.sleep(0.5)
            before = len(mpv.previews())
            x = x_of(TIMES[2])
            for dx in (-3, 0, 3, 0):
                SCREEN.xdotool("mousemove", str(x + dx), str(BAR_Y))
                time.sleep(0.5)
            self.assertEqual(mpv.previews()[before:], [], "a preview shown while the controller is never visible")
            client.send("script-message", "osc-visibility", "auto")
            time.sleep(0.5)
            mpv.hover(TIMES[3])
            client.close()
        finally:
            mpv.stop()

    def test_i_frame_image_sequence(self):
        """HLS whose master lists Apple's I-frame image sequence and no image playlist: each preview one JPEG."""
        shown = self.check(SITE.url + "sequence/thumbs/master.m3u8", "tracks", 2)
        self.assertEqual({p["origin"] for p in shown}, {"image-track"})


if __name__ == "__main__":
    unittest.main()
