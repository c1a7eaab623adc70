"""`filmstrip play --window` on a virtual screen (Xvfb) and sound card (a PulseAudio null sink): the picture, seeks,
resizing, fullscreen, every key, HDR tone mapping, and the seek bar's scrub previews from a DASH image track, an HLS
image playlist, Apple's I-frame image sequence and (a stream with I-frame playlists only) the `.frames` engine.

The videos are counters: every pixel of frame n has the colour that encodes n (the red, green and blue levels are
its digits in steps of 40 and 33, so a conversion that is off by a few levels still reads the right frame; the count
repeats every 252 frames, and the time nearest the expected one is taken). The HDR clip is a saturated hue, checked
against the ffmpeg CLI's own decode of the SDR source. The checks are made while the player is paused, so none
depends on the machine's speed; the timing figures (A/V offsets, smoothness) are measured by `make bench`, not here.

Run: FILMSTRIP_BIN=.build/release/filmstrip python3 -m unittest discover -s Tests/Window -v
FILMSTRIP_WINDOW_SCREENSHOT=PATH also saves the screen with a preview showing (the README's picture).
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.dirname(__file__))
import screen as screens  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BIN = os.environ.get("FILMSTRIP_BIN") or os.path.join(
    subprocess.check_output(["swift", "build", "--show-bin-path"], cwd=ROOT, text=True).strip(), "filmstrip")
DURATION = 30
FPS = 25
# The window's default size, and where WindowOutput draws its seek bar and preview in it (see WindowLoop+Events and
# WindowLoop+Drawing): the bar 30 px above the bottom with margins of a fortieth of the width, the preview a fifth of
# the width (160 to 320 px) wide, its bottom 27 px above the bar.
WIDTH, HEIGHT = 960, 540
MARGIN = max(12, WIDTH // 40)
BAR_Y = HEIGHT - 30
PREVIEW_WIDTH = min(320, max(160, WIDTH // 5))


def ffmpeg(*arguments):
    subprocess.run(["ffmpeg", "-v", "error", "-y", "-nostdin", *arguments], check=True)


def filmstrip(*arguments):
    return subprocess.run([BIN, *arguments], check=True, capture_output=True, text=True).stdout


def reference_colours(path):
    """The mean colour of every frame of `path` as the ffmpeg CLI decodes it."""
    raw = subprocess.run(["ffmpeg", "-v", "error", "-nostdin", "-i", path, "-vf", "scale=8:8", "-f", "rawvideo",
                          "-pix_fmt", "rgb24", "-"], capture_output=True, check=True).stdout
    colours = []
    for i in range(0, len(raw), 192):
        frame = raw[i:i + 192]
        colours.append(tuple(sum(frame[c::3]) / 64 for c in range(3)))
    return colours


def setUpModule():
    global WORK, SCREEN, COLOURS
    WORK = tempfile.mkdtemp(prefix="filmstrip-window-")
    source = os.path.join(WORK, "counter.mp4")
    counter = (f"nullsrc=s=640x360:r={FPS}:d={DURATION},format=rgb24,geq=r='20+mod(N,6)*40':"
               "g='20+mod(floor(N/6),6)*40':b='20+mod(floor(N/36),7)*33'")
    h264 = ["-c:v", "libx264", "-preset", "veryfast", "-g", "50", "-keyint_min", "50", "-sc_threshold", "0",
            "-pix_fmt", "yuv420p"]
    ffmpeg("-f", "lavfi", "-i", counter, "-f", "lavfi", "-i", f"sine=f=440:d={DURATION}", *h264, "-c:a", "aac",
           "-shortest", "-movflags", "+faststart", source)
    ramp = os.path.join(WORK, "hue.mp4")
    ffmpeg("-f", "lavfi", "-i", f"color=c=0xFF0000:s=640x360:r={FPS}:d=4,hue=h=10*t", *h264, ramp)
    COLOURS = reference_colours(ramp)
    # HLS (fMP4) with two audio renditions, English and French; then its master with an image playlist attached.
    two = os.path.join(WORK, "two-languages.mp4")
    ffmpeg("-i", source, "-f", "lavfi", "-i", f"sine=f=660:d={DURATION}", "-map", "0:v", "-map", "0:a", "-map", "1:a",
           "-c:v", "copy", "-c:a", "aac", "-shortest", two)
    os.makedirs(os.path.join(WORK, "hls"))
    ffmpeg("-i", two, "-map", "0:v", "-map", "0:a:0", "-map", "0:a:1", "-c", "copy", "-f", "hls", "-hls_time", "2",
           "-hls_playlist_type", "vod", "-hls_segment_type", "fmp4", "-hls_segment_filename",
           os.path.join(WORK, "hls", "seg_%v_%03d.m4s"), "-master_pl_name", "master.m3u8", "-var_stream_map",
           "v:0,agroup:aud a:0,agroup:aud,default:yes,language:en,name:English "
           "a:1,agroup:aud,language:fr,name:French", os.path.join(WORK, "hls", "stream_%v.m3u8"))
    generate = ["--interval", "2", "--columns", "5", "--rows", "2", "--attach", "--json"]
    filmstrip("generate", os.path.join(WORK, "hls", "master.m3u8"), "--output", os.path.join(WORK, "attach-hls"),
              *generate)
    # The same master with Apple's I-frame image sequence attached, and a copy that lists only it (as a packager
    # that writes no image playlist would): the seek bar reads the sequence.
    filmstrip("generate", os.path.join(WORK, "hls", "master.m3u8"), "--output", os.path.join(WORK, "attach-seq"),
              *generate, "--formats", "iframe-images")
    with open(os.path.join(WORK, "attach-seq", "master.m3u8")) as f:
        lines = [line for line in f if not line.startswith("#EXT-X-IMAGE-STREAM-INF")]
    with open(os.path.join(WORK, "attach-seq", "sequence-only.m3u8"), "w") as f:
        f.writelines(lines)
    # DASH as the ffmpeg muxer writes it, with thumbnail tiles attached.
    os.makedirs(os.path.join(WORK, "dash"))
    ffmpeg("-i", source, "-c", "copy", "-f", "dash", "-seg_duration", "2", "-use_template", "1", "-use_timeline", "1",
           os.path.join(WORK, "dash", "manifest.mpd"))
    filmstrip("generate", os.path.join(WORK, "dash", "manifest.mpd"), "--output",
              os.path.join(WORK, "attach-dash"), *generate)
    # HLS (TS) with I-frame playlists and no image track: the previews come from the `.frames` engine.
    os.makedirs(os.path.join(WORK, "hls-ts"))
    ffmpeg("-i", source, "-c", "copy", "-f", "hls", "-hls_time", "2", "-hls_playlist_type", "vod", "-master_pl_name",
           "master.m3u8", os.path.join(WORK, "hls-ts", "index.m3u8"))
    filmstrip("iframes", os.path.join(WORK, "hls-ts", "master.m3u8"), "--output", os.path.join(WORK, "iframes"))
    # HDR10: the first 4 s of the ramp in 10-bit BT.2020 with the PQ curve, SDR white at 203 cd/m2 (BT.2408).
    ffmpeg("-i", ramp, "-an", "-vf",
           "zscale=tin=bt709:min=bt709:pin=bt709:rin=tv:t=smpte2084:m=bt2020nc:p=bt2020:r=tv:npl=203,"
           "format=yuv420p10le", "-c:v", "libx264", "-preset", "veryfast", "-colorspace", "bt2020nc",
           "-color_primaries", "bt2020", "-color_trc", "smpte2084", os.path.join(WORK, "hdr.mp4"))
    # Sound alone: an MP3 with a cover picture of one colour (0x3080C0), and an M4A without one.
    ffmpeg("-f", "lavfi", "-i", "sine=f=440:d=8", "-f", "lavfi", "-i", "color=c=0x3080C0:s=200x200:d=1",
           "-frames:v", "1", "-map", "0:a", "-map", "1:v", "-c:a", "libmp3lame", "-c:v", "png", "-disposition:v",
           "attached_pic", os.path.join(WORK, "song-cover.mp3"))
    ffmpeg("-f", "lavfi", "-i", "sine=f=440:d=8", "-c:a", "aac", os.path.join(WORK, "song.m4a"))
    SCREEN = screens.Screen()


def tearDownModule():
    SCREEN.stop()
    shutil.rmtree(WORK, ignore_errors=True)


def time_of(colour, near):
    """The time of the counter frame whose colour `colour` is, the one nearest `near` seconds; None when the colour
    is no counter colour."""
    digits = []
    for value, step, count in zip(colour, (40, 40, 33), (6, 6, 7)):
        k = round((value - 20) / step)
        if not 0 <= k < count or abs(value - (20 + k * step)) > step / 2.5:
            return None
        digits.append(k)
    n = digits[0] + digits[1] * 6 + digits[2] * 36
    return min(((n + 252 * k) / FPS for k in range(4)), key=lambda t: abs(t - near))


class WindowCase(unittest.TestCase):
    def open(self, source, *arguments):
        # A window plays as it opens; the tests that look at a still picture open it paused.
        if "--autoplay" not in arguments:
            arguments = arguments + ("--paused",)
        player = screens.WindowedPlayer(SCREEN, BIN, source, *arguments)
        self.addCleanup(player.kill)
        return player

    def shown_time(self, player, near, y=None):
        """The time of the frame in the middle of the window (or at height `y`)."""
        pixels = player.grab()
        centre = pixels.mean(pixels.width // 2 - 40, (y or pixels.height // 2) - 20, 80, 40)
        t = time_of(centre, near)
        self.assertIsNotNone(t, f"the colour {centre} is no frame of the video")
        return t

    def paused_at(self, player, after):
        """Where the player pauses after the command at `after`: the statistics that come with the next change to
        `paused`. (Statistics are also published every second; on a loaded machine one published while the player is
        still paused at the previous place, before the command is carried out, would give the old position.)"""
        player.wait_for(lambda e: e.get("event") == "state" and e["to"] == "paused", after=after)
        with player.condition:
            change = next(i for i in range(after, len(player.events))
                          if player.events[i].get("event") == "state" and player.events[i]["to"] == "paused")
        return player.stats(lambda e: e["state"] == "paused", after=change + 1)["position"]


class Picture(WindowCase):
    def test_plays_pauses_and_seeks_with_the_keys_showing_the_right_frame(self):
        player = self.open(os.path.join(WORK, "counter.mp4"), "--autoplay")
        player.stats(lambda e: e["state"] == "playing" and e["position"] >= 1.5)
        mark = player.mark()
        player.key("space")
        self.assertEqual(player.action("play", after=mark)["playing"], False)
        position = self.paused_at(player, mark)
        shown = self.shown_time(player, position)
        self.assertLess(abs(shown - position), 0.05, f"paused at {position}, the window shows {shown}")
        for key, step in (("Right", 5), ("Left", -5)):
            mark = player.mark()
            player.key(key)
            target = player.action("seek", after=mark)["time"]
            self.assertAlmostEqual(target, position + step, delta=0.1)
            landed = self.paused_at(player, mark)
            self.assertAlmostEqual(landed, target, delta=0.05)
            shown = self.shown_time(player, target)
            self.assertLess(abs(shown - target), 0.05, f"after {key}: sought {target}, the window shows {shown}")
            position = landed
        # `i`: the statistics overlay (white text on a dark box at the top left, on a saturated picture).
        before = player.grab()
        mark = player.mark()
        player.key("i")
        self.assertEqual(player.action("overlay", after=mark)["shown"], True)
        SCREEN.xdotool("sleep", "0.3")
        after = player.grab()

        def count(pixels):
            return sum(1 for y in range(12, 90, 2) for x in range(8, 420, 2) if min(pixels.at(x, y)) > 200)
        self.assertEqual(count(before), 0)
        self.assertGreater(count(after), 100, "no overlay text")
        mark = player.mark()
        self.assertEqual(player.finish(), 0, "".join(player.stderr))
        player.action("quit", after=mark)

    def test_a_window_plays_as_it_opens_unless_paused(self):
        player = screens.WindowedPlayer(SCREEN, BIN, os.path.join(WORK, "counter.mp4"))
        self.addCleanup(player.kill)
        player.stats(lambda e: e["state"] == "playing")
        self.assertEqual(player.finish(), 0)

    def test_resizing_keeps_the_aspect_ratio_and_f_goes_fullscreen(self):
        player = self.open(os.path.join(WORK, "counter.mp4"))
        player.stats(lambda e: e["state"] == "paused")
        # The pointer away from the window (the seek bar would show under it), in the corner no window covers.
        SCREEN.xdotool("mousemove", str(screens.WIDTH - 1), str(screens.HEIGHT - 1))
        mark = player.mark()
        SCREEN.xdotool("windowsize", player.window, "800", "300")
        resized = player.action("resized", after=mark)
        self.assertEqual((resized["width"], resized["height"]), (800, 300))
        SCREEN.xdotool("sleep", "0.3")
        box = player.grab().lit_box(threshold=8)
        # 640x360 fitted into 800x300: 533x300, centred.
        self.assertAlmostEqual(box[2] / box[3], 16 / 9, delta=0.04, msg=f"picture box {box}")
        self.assertAlmostEqual(box[3], 300, delta=3)
        self.assertAlmostEqual(box[0] + box[2] / 2, 400, delta=4)
        mark = player.mark()
        player.key("f")
        self.assertEqual(player.action("fullscreen", after=mark)["fullscreen"], True)
        SCREEN.xdotool("sleep", "0.5")
        self.assertEqual(player.geometry()[2:], (screens.WIDTH, screens.HEIGHT))
        box = player.grab().lit_box(threshold=8)
        self.assertAlmostEqual(box[2], screens.WIDTH, delta=4)
        self.assertAlmostEqual(box[3], screens.HEIGHT, delta=4)
        mark = player.mark()
        player.key("f")
        self.assertEqual(player.action("fullscreen", after=mark)["fullscreen"], False)
        self.assertEqual(player.finish(), 0)

    def test_hdr_is_shown_tone_mapped(self):
        """A saturated red, turned 10 degrees of hue a second, in HDR10: the first frame must look as the ffmpeg CLI
        decodes the SDR source."""
        player = self.open(os.path.join(WORK, "hdr.mp4"))
        player.stats(lambda e: e["state"] == "paused")
        SCREEN.xdotool("sleep", "0.3")
        pixels = player.grab()
        shown = pixels.mean(pixels.width // 2 - 40, pixels.height // 2 - 20, 80, 40)
        # The SDR ramp's first frame comes back (the PQ code values shown as they are would be dim and pale).
        for channel, (a, b) in enumerate(zip(shown, COLOURS[0])):
            self.assertLess(abs(a - b), 30, f"channel {channel}: {shown} against the SDR {COLOURS[0]}")
        self.assertEqual(player.finish(), 0)

    def test_without_a_display_it_says_so(self):
        env = {k: v for k, v in os.environ.items() if k not in ("DISPLAY", "WAYLAND_DISPLAY")}
        result = subprocess.run([BIN, "play", os.path.join(WORK, "counter.mp4"), "--window"], env=env,
                                capture_output=True, text=True, timeout=30)
        self.assertEqual(result.returncode, 1)
        self.assertIn("no display", result.stderr)


class SoundAlone(WindowCase):
    """A file of audio alone shows its cover picture (else a plain card) with the seek bar, and plays."""

    def test_cover_picture_else_a_card(self):
        for name, colour, where in (("song-cover.mp3", (48, 128, 192), "centre"), ("song.m4a", (34, 38, 46), "corner")):
            player = self.open(os.path.join(WORK, name), "--autoplay")
            player.stats(lambda e: e["state"] == "playing" and e["audio_only"])
            SCREEN.xdotool("sleep", "0.3")
            pixels = player.grab()
            x, y = (pixels.width // 2 - 20, pixels.height // 2 - 20) if where == "centre" else (8, 8)
            shown = pixels.mean(x, y, 40, 40)
            self.assertTrue(all(abs(a - b) < 10 for a, b in zip(shown, colour)), f"{name}: {shown}, not {colour}")
            # The seek bar over the card, and a click on it seeks.
            x0, y0, width, height = player.geometry()
            player.pointer(width // 2, height - 30)
            SCREEN.xdotool("sleep", "0.3")
            mark = player.mark()
            player.click()
            self.assertAlmostEqual(player.action("seek", after=mark)["time"], 4, delta=0.5)
            self.assertEqual(player.finish(), 0)


class Keys(WindowCase):
    def test_volume_mute_rate_and_audio_track(self):
        player = self.open(os.path.join(WORK, "hls", "master.m3u8"), "--autoplay")
        player.stats(lambda e: e["state"] == "playing")
        tracks = player.wait_for(lambda e: e.get("event") == "audio_tracks")["tracks"]
        self.assertEqual([t["selected"] for t in tracks], [True, False])
        steps = [("Down", "volume", "volume", 0.9), ("Down", "volume", "volume", 0.8), ("Up", "volume", "volume", 0.9),
                 ("m", "mute", "muted", True), ("m", "mute", "muted", False),
                 ("bracketright", "rate", "rate", 1.25), ("bracketleft", "rate", "rate", 1.0),
                 ("bracketleft", "rate", "rate", 0.75)]
        for key, action, field, value in steps:
            mark = player.mark()
            player.key(key)
            self.assertEqual(player.action(action, after=mark)[field], value, key)
            # The effect, in the player's own statistics.
            player.stats(lambda e: e[field] == value, after=mark)
        mark = player.mark()
        player.key("a")
        self.assertEqual(player.action("audio_track", after=mark)["index"], 1)
        tracks = player.wait_for(lambda e: e.get("event") == "audio_tracks", after=mark)["tracks"]
        self.assertEqual([(t["language"], t["selected"]) for t in tracks], [("en", False), ("fr", True)])
        mark = player.mark()
        player.key("space")
        self.assertEqual(player.action("play", after=mark)["playing"], False)
        self.paused_at(player, mark)
        self.assertEqual(player.finish(), 0)

    def test_a_switches_the_audio_streams_of_a_file(self):
        """A file with two audio streams (the commonest case on disk): `a` selects the second, as for a stream."""
        player = self.open(os.path.join(WORK, "two-languages.mp4"), "--autoplay")
        player.stats(lambda e: e["state"] == "playing")
        tracks = player.wait_for(lambda e: e.get("event") == "audio_tracks")["tracks"]
        self.assertEqual([t["selected"] for t in tracks], [True, False])
        mark = player.mark()
        player.key("a")
        self.assertEqual(player.action("audio_track", after=mark)["index"], 1)
        tracks = player.wait_for(lambda e: e.get("event") == "audio_tracks", after=mark)["tracks"]
        self.assertEqual([t["selected"] for t in tracks], [False, True])
        player.stats(lambda e: e["state"] == "playing", after=mark)
        self.assertEqual(player.finish(), 0)


class ScrubPreviews(WindowCase):
    """The pointer over the bar at several places: the preview above it shows that time's thumbnail, and a click
    seeks there."""

    def scrub(self, source, expected_source, interval, screenshot=None):
        player = self.open(source)
        player.stats(lambda e: e["state"] == "paused")
        self.assertEqual(player.wait_for(lambda e: e.get("event") == "previews")["source"], expected_source)
        for fraction in (0.3, 0.55, 0.8):
            x = MARGIN + round(fraction * (WIDTH - 2 * MARGIN))
            hovered = (x - MARGIN) / (WIDTH - 2 * MARGIN) * DURATION
            mark = player.mark()
            player.pointer(x, BAR_Y + 3)
            shown = player.wait_for(lambda e: e.get("event") == "window" and e.get("action") == "preview"
                                    and abs(e["time"] - hovered) < 0.1, after=mark)
            cue = shown["cue"]
            self.assertLessEqual(cue, hovered + 0.05)
            self.assertLess(hovered - cue, interval + 0.05, f"cue {cue} for {hovered}")
            SCREEN.xdotool("sleep", "0.2")
            pixels = player.grab()
            height = PREVIEW_WIDTH * 9 // 16
            left = min(max(4, x - PREVIEW_WIDTH // 2), WIDTH - PREVIEW_WIDTH - 4)
            top = BAR_Y - 27 - height
            colour = pixels.mean(left + PREVIEW_WIDTH // 4, top + height // 8, PREVIEW_WIDTH // 2, height // 3)
            t = time_of(colour, cue)
            self.assertIsNotNone(t, f"the preview's colour {colour} is no frame of the video")
            self.assertLess(abs(t - cue), 0.05, f"hovering {hovered:.2f}: the preview shows {t}, its cue is {cue}")
            if screenshot and fraction == 0.55:
                SCREEN.save(screenshot, player.geometry())
            mark = player.mark()
            player.click()
            target = player.action("seek", after=mark)["time"]
            self.assertAlmostEqual(target, hovered, delta=0.1)
            landed = self.paused_at(player, mark)
            self.assertAlmostEqual(landed, target, delta=0.05)
            self.assertLess(abs(self.shown_time(player, target, y=HEIGHT // 4) - target), 0.05)
        self.assertEqual(player.finish(), 0)

    def test_dash_image_track(self):
        self.scrub(os.path.join(WORK, "attach-dash", "manifest.mpd"), "image-track", 2,
                   os.environ.get("FILMSTRIP_WINDOW_SCREENSHOT"))

    def test_hls_image_playlist(self):
        self.scrub(os.path.join(WORK, "attach-hls", "master.m3u8"), "image-track", 2)

    def test_hls_i_frame_image_sequence(self):
        with open(os.path.join(WORK, "attach-seq", "sequence-only.m3u8")) as f:
            master = f.read()
        self.assertIn('CODECS="mjpg"', master)
        self.assertNotIn("IMAGE-STREAM-INF", master)
        self.scrub(os.path.join(WORK, "attach-seq", "sequence-only.m3u8"), "image-track", 2)

    def test_frames_engine_over_i_frame_playlists(self):
        with open(os.path.join(WORK, "iframes", "master.m3u8")) as f:
            master = f.read()
        self.assertIn("#EXT-X-I-FRAME-STREAM-INF", master)
        self.assertNotIn("IMAGE", master)
        self.scrub(os.path.join(WORK, "iframes", "master.m3u8"), "frames", 2)

    def test_a_sidecar_track(self):
        player = self.open(os.path.join(WORK, "dash", "manifest.mpd"), "--thumbnails",
                           os.path.join(WORK, "attach-dash", "thumbnails.vtt"))
        self.assertEqual(player.wait_for(lambda e: e.get("event") == "previews")["source"], "sidecar")
        self.assertEqual(player.finish(), 0)


if __name__ == "__main__":
    unittest.main()
