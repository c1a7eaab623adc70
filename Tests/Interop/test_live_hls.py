"""Interop of live HLS previews: the ffmpeg CLI's HLS muxer makes a live stream during the test (MPEG-TS, 2 s
segments, `EXT-X-PROGRAM-DATE-TIME`, a grey ramp whose luma rises 7 per second, in real time), `filmstrip generate
--live` follows it and publishes the live image playlist and the live I-frame image sequence, and a master lists the
video, the image playlist (`EXT-X-IMAGE-STREAM-INF`) and the sequence (`EXT-X-I-FRAME-STREAM-INF`, `CODECS="mjpg"`).
While the stream is live, each Shaka Player build in `players/` (headless Chromium) is asked for the thumbnail of every
published time of each track.

Shaka places a live HLS stream on a timeline whose zero is the first video segment's program date, and the image
tracks by their own program dates; the ramp's time is also counted from that segment, so a player time is the frame's
time. Every answer must be the cue of Filmstrip's own live WebVTT track (program dates, less the first segment's) with
its picture: the sheet's region for the image playlist, the entry's JPEG in its sheet's fMP4 file for the sequence.

Run: FILMSTRIP_BIN=.build/release/filmstrip python3 -m unittest discover -s Tests/Interop -p 'test_live_hls.py' -v
"""
import datetime
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
import unittest

sys.path.insert(0, os.path.dirname(__file__))
import players  # noqa: E402
from test_players import BIN, RATE, InteropCase, reads_image_sequences  # noqa: E402

SECONDS = 30
MASTER = """#EXTM3U
#EXT-X-VERSION:7
#EXT-X-STREAM-INF:BANDWIDTH=300000,RESOLUTION=320x180,CODECS="avc1.64000d"
video.m3u8
#EXT-X-IMAGE-STREAM-INF:BANDWIDTH=20000,RESOLUTION=160x90,CODECS="jpeg",URI="previews/thumbnails.m3u8"
#EXT-X-I-FRAME-STREAM-INF:BANDWIDTH=40000,CODECS="mjpg",RESOLUTION=160x90,URI="previews/iframe-images.m3u8"
"""


def setUpModule():
    global WORK, SITE, DRIVER, BUNDLES, ORIGIN, GENERATOR
    BUNDLES = players.bundles()
    WORK = tempfile.mkdtemp(prefix="filmstrip-interop-live-hls-")
    live = os.path.join(WORK, "live")
    os.makedirs(live)
    SITE = players.Site(WORK)
    DRIVER = players.chromium()
    ORIGIN = subprocess.Popen(
        ["ffmpeg", "-v", "error", "-nostdin", "-re", "-f", "lavfi", "-i",
         f"color=c=black:s=320x180:r=25:d={SECONDS},format=yuv420p,geq=lum='16+{RATE}*T':cb=128:cr=128",
         "-c:v", "libx264", "-g", "50", "-keyint_min", "50", "-sc_threshold", "0", "-pix_fmt", "yuv420p",
         "-f", "hls", "-hls_time", "2", "-hls_list_size", "0", "-hls_flags", "program_date_time",
         os.path.join(live, "video.m3u8")])
    deadline = time.time() + 30
    while not os.path.exists(os.path.join(live, "video.m3u8")) and time.time() < deadline:
        time.sleep(0.1)
    with open(os.path.join(live, "master.m3u8"), "w") as f:
        f.write(MASTER)
    GENERATOR = subprocess.Popen(
        [BIN, "generate", SITE.url + "live/video.m3u8", "--live", "--output", os.path.join(live, "previews"),
         "--interval", "2", "--columns", "5", "--rows", "2", "--sheet-span", "4",
         "--formats", "vtt,hls,iframe-images", "--from-start"],
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)


def tearDownModule():
    for process in (ORIGIN, GENERATOR):
        if process.poll() is None:
            process.terminate()
        process.wait()
    DRIVER.quit()
    SITE.stop()
    shutil.rmtree(WORK, ignore_errors=True)


def program_dates(playlist):
    """[(program date in seconds since 1970, duration)] of a playlist's entries, in order (a date carried on)."""
    entries, date, duration = [], None, None
    with open(playlist) as f:
        for line in f.read().splitlines():
            if line.startswith("#EXT-X-PROGRAM-DATE-TIME:"):
                stamp = line.split(":", 1)[1].replace("Z", "+00:00")
                stamp = re.sub(r"([+-]\d\d)(\d\d)$", r"\1:\2", stamp)
                date = datetime.datetime.fromisoformat(stamp).timestamp()
            elif line.startswith("#EXTINF:"):
                duration = float(line.split(":", 1)[1].split(",")[0])
            elif line and not line.startswith("#") and duration is not None:
                entries.append((date, duration))
                date = None if date is None else date + duration
                duration = None
    return entries


class LiveHLSPreviews(InteropCase):
    def setUp(self):
        import test_players
        test_players.WORK, test_players.SITE, test_players.DRIVER, test_players.BUNDLES = WORK, SITE, DRIVER, BUNDLES

    def published(self):
        """Filmstrip's live WebVTT cues (program dates), the ones the image playlist lists now: the track files are
        written one after another, so the WebVTT may be a sheet ahead."""
        previews = os.path.join(WORK, "live", "previews")
        listed = max(date + duration for date, duration in program_dates(os.path.join(previews, "thumbnails.m3u8")))
        cues = players.read_vtt(os.path.join(previews, "thumbnails.vtt"), SITE.url + "live/previews/")
        return [cue for cue in cues if cue["end"] <= listed + 1e-3]

    @staticmethod
    def mismatches(track, cues, times, ramp_zero):
        """Each answer of `track` (times and cues on the player's timeline) against its cue: the sheet's region of an
        image playlist, or for the I-frame image sequence the entry in that sheet's fMP4 file; the same start and
        duration; a picture showing the cue's frame (the ramp's time counts from `ramp_zero` on that timeline)."""
        found = []
        for t, answer in zip(times, track["answers"]):
            cue = players.cue_at(cues, t)
            if answer is None:
                found.append(f"t={t}: no thumbnail (expected {cue})")
                continue
            if track.get("codecs") == "mjpg":
                uri = re.sub(r"sprite-(\d+)\.jpg$", r"iframe-images-\1.mp4", cue["uri"])
                want = (uri, 0, 0, cue["w"], cue["h"])
            else:
                want = (cue["uri"], cue["x"], cue["y"], cue["w"], cue["h"])
            got = (answer["uri"], round(answer["x"]), round(answer["y"]), round(answer["w"]), round(answer["h"]))
            if got != want or abs(answer["start"] - cue["start"]) > 1e-3 \
                    or abs(answer["duration"] - (cue["end"] - cue["start"])) > 1e-3:
                found.append(f"t={t}: {got} from {answer['start']:.3f} for {answer['duration']:.3f} s instead of "
                             f"{want} from {cue['start']:.3f} to {cue['end']:.3f}")
            shown = ramp_zero + answer["pixels"]["mean"] * 219 / 255 / RATE
            if answer["pixels"]["spread"] > 14 or not cue["start"] - 0.6 <= shown < cue["end"]:
                found.append(f"t={t}: the picture shows {shown:.2f} s (spread {answer['pixels']['spread']}), not "
                             f"one of [{cue['start']:.3f}, {cue['end']:.3f})")
        return found

    def ask_all(self, phase, first_segment, dense):
        """Asks every Shaka build that reads live HLS image streams about every published cue (with `dense` five
        instants per cue, else three) and checks both tracks. A player's time zero is the program date it reports,
        the video's first segment's: cues go onto that timeline first."""
        asked = 0
        for kind, name, bundle in self.players_of("shaka"):
            if not reads_image_sequences(name):
                # 4.4 and 4.5 throw inside getThumbnails on a live HLS image stream (a TypeError of their own).
                continue
            dated = self.published()
            self.assertGreaterEqual(len(dated), 8, f"{name}: {dated}")
            with self.subTest(player=name, phase=phase):
                zero = players.ask(DRIVER, SITE, bundle, kind, self.url("live/master.m3u8"), [])["start"]
                self.assertLessEqual(abs(zero - first_segment), 1e-3, f"the player's zero is {zero}")
                cues = [dict(cue, start=round(cue["start"] - zero, 3), end=round(cue["end"] - zero, 3))
                        for cue in dated]
                times = players.probe_times(cues)
                if dense:
                    times += [t for cue in cues for t in (round(cue["start"] + 0.5, 3), round(cue["end"] - 0.5, 3))]
                # Program dates are seconds since 1970, which a double holds to about 2e-7 s: a player's start of
                # an entry, a difference of two such dates, may land that much either side of the cue's. A probe
                # exactly on a start is taken 1 ms in; the other instants are checked as they are.
                starts = {cue["start"] for cue in cues}
                times = sorted(round(t + 0.001, 3) if t in starts else t for t in times)
                result = players.ask(DRIVER, SITE, bundle, kind, self.url("live/master.m3u8"), times)
                self.assertNotIn("error", result, f"{name}: {result.get('error')}")
                self.assertEqual(result["start"], zero, "the player's zero moved between two loads")
                tracks = {track.get("codecs"): track for track in result["tracks"]}
                self.assertEqual(set(tracks), {"jpeg", "mjpg"}, players.json_dump(result)[:2000])
                found = []
                for track in tracks.values():
                    found += self.mismatches(track, cues, times, first_segment - zero)
                self.assertEqual(found, [], f"{name}: {phase} HLS")
                print(f"  {name}: {phase} HLS, image playlist and I-frame image sequence, {len(times)} times each, "
                      "0 mismatches", file=sys.stderr)
            asked += 1
        self.assertGreater(asked, 0, "no Shaka Player build from 4.11 on in players/")

    def test_image_playlist_and_image_sequence_live_then_ended(self):
        previews = os.path.join(WORK, "live", "previews")
        vtt = os.path.join(previews, "thumbnails.vtt")
        deadline = time.time() + 90
        while time.time() < deadline:
            if os.path.exists(vtt) and len(players.read_vtt(vtt, SITE.url)) >= 9 \
                    and os.path.exists(os.path.join(previews, "iframe-images.m3u8")):
                break
            time.sleep(0.5)
        self.assertIsNone(ORIGIN.poll(), "the stream ended before the players were asked")
        first_segment = program_dates(os.path.join(WORK, "live", "video.m3u8"))[0][0]
        self.ask_all("live", first_segment, dense=True)
        # The stream ends: the video playlist and both tracks get EXT-X-ENDLIST. Read as VOD then, Shaka starts every
        # playlist at its time zero rather than placing them by program dates: the tracks start with the video's
        # first segment (their tiles are counted from it), so the same answers hold.
        self.assertEqual(ORIGIN.wait(timeout=120), 0)
        self.assertEqual(GENERATOR.wait(timeout=120), 0, GENERATOR.stderr.read())
        with open(os.path.join(previews, "iframe-images.m3u8")) as f:
            self.assertIn("#EXT-X-ENDLIST", f.read())
        self.ask_all("ended", first_segment, dense=False)


if __name__ == "__main__":
    unittest.main()
