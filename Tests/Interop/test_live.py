"""Interop of live preview tracks: `filmstrip generate --live` follows live streams the ffmpeg CLI's own muxers make
during the test (a grey ramp whose luma rises 7 per second, in real time), and the real players (the Shaka Player and
dash.js builds in `players/`) in headless Chromium are asked, while the stream is live, for the thumbnail of every
published time. Each answer must be the cue of Filmstrip's own live WebVTT track and show its frame.

The image AdaptationSet is put into the stream's own dynamic MPD, as an origin that builds its MPD per request
would. (The live HLS image playlist and I-frame image sequence beside an HLS stream: `test_live_hls.py`.)

Run: FILMSTRIP_BIN=.build/release/filmstrip python3 -m unittest discover -s Tests/Interop -p 'test_live.py' -v
"""
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time
import unittest
import xml.etree.ElementTree

sys.path.insert(0, os.path.dirname(__file__))
import players  # noqa: E402
from test_players import BIN, RATE, InteropCase, time_of_grey  # noqa: E402,F401

SECONDS = 40


def setUpModule():
    global WORK, SITE, DRIVER, BUNDLES, ORIGIN, GENERATOR, MERGER, STOP
    BUNDLES = players.bundles()
    WORK = tempfile.mkdtemp(prefix="filmstrip-interop-live-")
    live = os.path.join(WORK, "live")
    os.makedirs(live)
    SITE = players.Site(WORK)
    DRIVER = players.chromium()
    ORIGIN = subprocess.Popen(
        ["ffmpeg", "-v", "error", "-nostdin", "-re", "-f", "lavfi", "-i",
         f"color=c=black:s=320x180:r=25:d={SECONDS},format=yuv420p,geq=lum='16+{RATE}*T':cb=128:cr=128",
         "-c:v", "libx264", "-g", "50", "-keyint_min", "50", "-sc_threshold", "0", "-pix_fmt", "yuv420p",
         "-f", "dash", "-seg_duration", "2", "-use_template", "1", "-use_timeline", "1", "-window_size", "0",
         "-streaming", "0", os.path.join(live, "live.mpd")])
    deadline = time.time() + 30
    while not os.path.exists(os.path.join(live, "live.mpd")) and time.time() < deadline:
        time.sleep(0.1)
    GENERATOR = subprocess.Popen(
        [BIN, "generate", SITE.url + "live/live.mpd", "--live", "--output", os.path.join(live, "previews"),
         "--interval", "2", "--columns", "5", "--rows", "2", "--sheet-span", "4", "--formats", "vtt,dash"],
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    STOP = threading.Event()
    MERGER = threading.Thread(target=merge, args=(live,), daemon=True)
    MERGER.start()


def merge(live):
    """The stream's MPD with the live image AdaptationSet added to its Period, rewritten as both change."""
    while not STOP.is_set():
        try:
            with open(os.path.join(live, "live.mpd")) as f:
                mpd = f.read()
            with open(os.path.join(live, "previews", "thumbnails-adaptationset.xml")) as f:
                images = f.read()
        except OSError:
            time.sleep(0.1)
            continue
        first, rest = images.split("\n", 1)
        images = first + "\n  <BaseURL>previews/</BaseURL>\n" + rest
        combined = mpd.replace("</Period>", images + "</Period>", 1)
        with open(os.path.join(live, "combined.tmp"), "w") as f:
            f.write(combined)
        os.replace(os.path.join(live, "combined.tmp"), os.path.join(live, "combined.mpd"))
        time.sleep(0.25)


def tearDownModule():
    STOP.set()
    for process in (ORIGIN, GENERATOR):
        if process.poll() is None:
            process.terminate()
        process.wait()
    DRIVER.quit()
    SITE.stop()
    shutil.rmtree(WORK, ignore_errors=True)


def image_timeline_end(mpd):
    """Seconds: where the SegmentTimeline of the MPD's image AdaptationSet ends."""
    namespace = {"d": "urn:mpeg:dash:schema:mpd:2011"}
    root = xml.etree.ElementTree.parse(mpd).getroot()
    end = 0.0
    for adaptation in root.iterfind(".//d:AdaptationSet", namespace):
        if adaptation.get("contentType") != "image":
            continue
        template = adaptation.find(".//d:SegmentTemplate", namespace)
        timescale = int(template.get("timescale", "1"))
        at = 0
        for segment in template.iterfind(".//d:S", namespace):
            at = int(segment.get("t", at))
            at += int(segment.get("d")) * (int(segment.get("r", "0")) + 1)
        end = max(end, at / timescale)
    return end


def wait_for_cues(vtt, count=6, timeout=90):
    deadline = time.time() + timeout
    while time.time() < deadline:
        combined = os.path.join(os.path.dirname(os.path.dirname(vtt)), "combined.mpd")
        if os.path.exists(vtt) and len(players.read_vtt(vtt, SITE.url)) >= count and os.path.exists(combined):
            return
        time.sleep(0.5)


def ask_live(case, label, bundle, kind, manifest, cues, times):
    """The player's mismatches for `times`. A live stream moves while a player is asked (its manifest reloads, the
    edge advances): a player that answers wrong is asked once more, on a fresh page 4 s later (dash.js has
    been seen to name the newest listed sheet "sprite-NaN.jpg" twice in a row, a moment apart), and that answer
    counts; the first is printed."""
    for attempt in (1, 2):
        if attempt == 2:
            time.sleep(4)
        result = players.ask(DRIVER, SITE, bundle, kind, case.url(manifest), times)
        if "error" in result:
            published = sorted(os.listdir(os.path.join(WORK, "live", "previews")))
            mismatches = [f"error: {result['error'][:300]} (published then: {' '.join(published)})"]
        else:
            mismatches = [f"t={t}: {text}" for t, text in case.check(label, result, cues, times, shaka=kind == "shaka")]
        if not mismatches or attempt == 2:
            return mismatches
        print(f"  {label}: asked again after {len(mismatches)} wrong answers, the first {mismatches[0]}",
              file=sys.stderr)


class LiveTracks(InteropCase):
    def setUp(self):
        import test_players
        test_players.WORK, test_players.SITE, test_players.DRIVER, test_players.BUNDLES = WORK, SITE, DRIVER, BUNDLES

    def test_dash_live_image_adaptation_set_in_the_stream_mpd(self):
        # While the stream is live: wait for a few sheets, then ask each player about what is published.
        wait_for_cues(os.path.join(WORK, "live", "previews", "thumbnails.vtt"))
        self.assertIsNone(ORIGIN.poll(), "the stream ended before the players were asked")
        for kind, name, bundle in self.players_of("shaka", "dashjs"):
            # The sheets the merged MPD lists, read before the track: the MPD is merged every 0.25 s, so the WebVTT
            # track can list a sheet the player's MPD does not yet (dash.js then names the sheet "sprite-NaN.jpg").
            listed = image_timeline_end(os.path.join(WORK, "live", "combined.mpd"))
            cues = [cue for cue in self.cues("live/previews/thumbnails.vtt") if cue["end"] <= listed + 1e-6]
            self.assertGreaterEqual(len(cues), 4, f"{name}: the merged MPD lists {listed} s of sheets")
            times = players.probe_times(cues)
            if kind == "dashjs":
                # dash.js places a live stream's segments in floating point from its availability start: at a cue's
                # exact first instant it may still answer the cue before. 50 ms in, every cue is checked.
                times = [round(t + 0.05, 3) if any(t == cue["start"] for cue in cues) else t for t in times]
            with self.subTest(player=name):
                mismatches = ask_live(self, f"{name}: live DASH", bundle, kind, "live/combined.mpd", cues, times)
                self.assertEqual(mismatches, [], f"{name}: live DASH")
                print(f"  {name}: live DASH, {len(times)} times while live, 0 mismatches", file=sys.stderr)
        # The stream ends; so does the run, with VOD tracks.
        self.assertEqual(ORIGIN.wait(timeout=120), 0)
        self.assertEqual(GENERATOR.wait(timeout=120), 0, GENERATOR.stderr.read())
        with open(os.path.join(WORK, "live", "previews", "thumbnails.mpd")) as f:
            self.assertIn('type="static"', f.read())


if __name__ == "__main__":
    unittest.main()
