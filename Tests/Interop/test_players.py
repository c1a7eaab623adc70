"""Interop: the preview tracks Filmstrip writes, read by the web players people use (the Shaka Player and dash.js
builds in `players/`, see its README) in headless Chromium, on streams the ffmpeg CLI packages at test time.

For every thumbnail time (each cue's start, middle and last instant) the player's answer (sheet URL, x, y, width,
height, and with Shaka start and duration) must equal the cue of Filmstrip's own WebVTT track, and the pixels of that
region (drawn on a canvas) must show the frame of that cue: the videos are grey ramps whose luma rises 7 per second.

Run: FILMSTRIP_BIN=.build/debug/filmstrip python3 -m unittest discover -s Tests/Interop -v
"""
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.dirname(__file__))
import players  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BIN = os.environ.get("FILMSTRIP_BIN") or os.path.join(
    subprocess.check_output(["swift", "build", "--show-bin-path"], cwd=ROOT, text=True).strip(), "filmstrip")
RATE = 7.0  # luma per second
DURATION = 30
# Thumbnails every 2 s on sheets of 5x2: 15 thumbnails, the second sheet half filled.
GENERATE = ["--interval", "2", "--columns", "5", "--rows", "2"]


def reads_image_sequences(name):
    """Whether a Shaka Player build reads an I-frame image sequence (`CODECS="mjpg"`) as an image track: its I-frame
    playlist support came with 4.11 (shaka-player #7230); 4.4 and 4.5 list no such track."""
    match = re.search(r"v(\d+)\.(\d+)", name)
    return bool(match) and (int(match.group(1)), int(match.group(2))) >= (4, 11)


def ffmpeg(*arguments):
    subprocess.run(["ffmpeg", "-v", "error", "-y", *arguments], check=True)


def encode(path, start, seconds):
    """A 320x180 H.264 + AAC clip of the ramp from `start` for `seconds`, a keyframe every 2 s."""
    ffmpeg("-f", "lavfi", "-i",
           f"color=c=black:s=320x180:r=25:d={seconds},format=yuv420p,geq=lum='16+{RATE}*(T+{start})':cb=128:cr=128",
           "-f", "lavfi", "-i", f"sine=f=440:d={seconds}", "-c:v", "libx264", "-g", "50", "-keyint_min", "50",
           "-sc_threshold", "0", "-pix_fmt", "yuv420p", "-c:a", "aac", "-shortest", path)


def time_of_grey(level):
    """The time of a ramp frame from its grey level (full-range RGB of limited-range luma)."""
    return level * 219 / 255 / RATE


def generate(source, output, *extra):
    result = subprocess.run([BIN, "generate", source, "--output", output, *GENERATE, "--json", *extra],
                            check=True, capture_output=True, text=True)
    return json.loads(result.stdout)


def period_body(mpd):
    with open(mpd) as f:
        text = f.read()
    return re.search(r"<Period[^>]*>(.*)</Period>", text, re.S).group(1)


def two_periods(folder, boundary):
    """A two-Period MPD of the ramp split at `boundary` seconds, each Period packaged by the ffmpeg DASH muxer."""
    for name, start, seconds in (("a", 0, boundary), ("b", boundary, DURATION - boundary)):
        os.makedirs(os.path.join(folder, name))
        clip = os.path.join(folder, name + ".mp4")
        encode(clip, start, seconds)
        ffmpeg("-i", clip, "-c", "copy", "-f", "dash", "-seg_duration", "2", "-use_template", "1", "-use_timeline",
               "1", os.path.join(folder, name, "manifest.mpd"))
    with open(os.path.join(folder, "manifest.mpd"), "w") as f:
        f.write('<?xml version="1.0" encoding="utf-8"?>\n'
                '<MPD xmlns="urn:mpeg:dash:schema:mpd:2011" profiles="urn:mpeg:dash:profile:isoff-live:2011" '
                f'type="static" mediaPresentationDuration="PT{DURATION}S" minBufferTime="PT4S">\n'
                f'  <Period id="p0" start="PT0S" duration="PT{boundary}S">\n    <BaseURL>a/</BaseURL>'
                + period_body(os.path.join(folder, "a", "manifest.mpd")) + "</Period>\n"
                f'  <Period id="p1" start="PT{boundary}S" duration="PT{DURATION - boundary}S">\n    <BaseURL>b/</BaseURL>'
                + period_body(os.path.join(folder, "b", "manifest.mpd")) + "</Period>\n</MPD>\n")


def setUpModule():
    global WORK, SITE, DRIVER, BUNDLES
    BUNDLES = players.bundles()
    WORK = tempfile.mkdtemp(prefix="filmstrip-interop-")
    source = os.path.join(WORK, "ramp.mp4")
    encode(source, 0, DURATION)
    # DASH as the ffmpeg muxer writes it: SegmentTemplate with a SegmentTimeline, video and audio sets.
    os.makedirs(os.path.join(WORK, "dash"))
    ffmpeg("-i", source, "-c", "copy", "-f", "dash", "-seg_duration", "2", "-use_template", "1", "-use_timeline",
           "1", os.path.join(WORK, "dash", "manifest.mpd"))
    # HLS fMP4 with the audio as a rendition of its own (EXT-X-MEDIA TYPE=AUDIO).
    os.makedirs(os.path.join(WORK, "hls"))
    ffmpeg("-i", source, "-map", "0:v", "-map", "0:a", "-c", "copy", "-f", "hls", "-hls_time", "2",
           "-hls_playlist_type", "vod", "-hls_segment_type", "fmp4", "-hls_segment_filename",
           os.path.join(WORK, "hls", "seg_%v_%03d.m4s"), "-master_pl_name", "master.m3u8", "-var_stream_map",
           "v:0,agroup:aud a:0,agroup:aud,default:yes,language:en,name:English",
           os.path.join(WORK, "hls", "stream_%v.m3u8"))
    # An HLS media playlist of TS segments with no master.
    os.makedirs(os.path.join(WORK, "hls-ts"))
    ffmpeg("-i", source, "-c", "copy", "-f", "hls", "-hls_time", "2", "-hls_playlist_type", "vod",
           os.path.join(WORK, "hls-ts", "index.m3u8"))
    # Two Periods, each packaged on its own and given a Period BaseURL: one pair splits at 20 s, a sheet boundary (5x2
    # tiles of 2 s), the other at 14 s, inside the first sheet.
    for folder, boundary in (("two-periods", 20), ("two-periods-mid-sheet", 14)):
        two_periods(os.path.join(WORK, folder), boundary)
    SITE = players.Site(WORK)
    DRIVER = players.chromium()


def tearDownModule():
    DRIVER.quit()
    SITE.stop()
    shutil.rmtree(WORK, ignore_errors=True)


class InteropCase(unittest.TestCase):
    def url(self, relative):
        return SITE.url + relative

    def cues(self, relative_vtt):
        return players.read_vtt(os.path.join(WORK, relative_vtt), self.url(relative_vtt))

    def check(self, label, result, cues, times, shaka, sidecar=False):
        """Every answer equals its cue and shows its frame; returns the mismatches."""
        self.assertNotIn("error", result, f"{label}: {result.get('error')}")
        track = self.track_for(result, cues)
        self.assertIsNotNone(track, f"{label}: the player has no image track of {cues[0]['w']} px: "
                                    + players.json_dump(result))
        self.assertEqual(len(track["answers"]), len(times))
        mismatches = []
        for t, answer in zip(times, track["answers"]):
            cue = players.cue_at(cues, t)
            if answer is None:
                mismatches.append((t, f"no thumbnail (expected {cue})"))
                continue
            # Shaka answers a WebVTT cue with its media fragment left on the URL, and the region beside it.
            uri = answer["uri"].split("#")[0] if sidecar else answer["uri"]
            got = (uri, round(answer["x"]), round(answer["y"]), round(answer["w"]), round(answer["h"]))
            want = (cue["uri"], cue["x"], cue["y"], cue["w"], cue["h"])
            if got != want:
                mismatches.append((t, f"{got} instead of {want}"))
            if shaka:
                last = cue is cues[-1]
                duration = cue["end"] - cue["start"]
                if abs(answer["start"] - cue["start"]) > 1e-3 or (
                        abs(answer["duration"] - duration) > 1e-3 and not (last and answer["duration"] > duration)):
                    mismatches.append((t, f"starts {answer['start']} for {answer['duration']} s instead of "
                                          f"{cue['start']} for {duration} s"))
            pixels = answer["pixels"]
            shown = time_of_grey(pixels["mean"])
            if pixels["spread"] > 14:
                mismatches.append((t, f"the region shows more than one thumbnail (spread {pixels['spread']})"))
            if not cue["start"] - 0.6 <= shown < cue["end"]:
                mismatches.append((t, f"the region shows the frame of {shown:.2f} s, not one of "
                                      f"[{cue['start']}, {cue['end']})"))
        return mismatches

    @staticmethod
    def track_for(result, cues, sequence=False):
        """The player's track whose tiles have the cues' size (a Shaka image track per width; dash.js one): an image
        playlist's or tiles', or with `sequence` an I-frame image sequence's (`CODECS="mjpg"`)."""
        for track in result["tracks"]:
            if (track.get("codecs") == "mjpg") != sequence:
                continue
            first = next((a for a in track["answers"] if a), None)
            if first and round(first["w"]) == cues[0]["w"] and round(first["h"]) == cues[0]["h"]:
                return track
        return None

    def check_sequence(self, label, result, cues, times, media):
        """The image sequence's track (Shaka reads `CODECS="mjpg"` from 4.11 on; earlier builds leave it out): every answer names the
        entry of its cue (its time, the media file, a whole image of the tile's size) and its JPEG shows that cue's
        frame; returns the mismatches, or None when the player lists no such track."""
        track = self.track_for(result, cues, sequence=True)
        if track is None:
            return None
        mismatches = []
        for t, answer in zip(times, track["answers"]):
            cue = players.cue_at(cues, t)
            if answer is None:
                mismatches.append((t, f"image sequence: no thumbnail (expected {cue})"))
                continue
            got = (answer["uri"], round(answer["x"]), round(answer["y"]), round(answer["w"]), round(answer["h"]),
                   round(answer["start"], 3), round(answer["duration"], 3))
            want = (media, 0, 0, cue["w"], cue["h"], cue["start"], round(cue["end"] - cue["start"], 3))
            if got != want:
                mismatches.append((t, f"image sequence: {got} instead of {want}"))
            shown = time_of_grey(answer["pixels"]["mean"])
            if not cue["start"] - 0.6 <= shown < cue["end"]:
                mismatches.append((t, f"image sequence: the image shows {shown:.2f} s, not one of "
                                      f"[{cue['start']}, {cue['end']})"))
        return mismatches

    def players_of(self, *kinds):
        chosen = [b for b in BUNDLES if b[0] in kinds]
        self.assertTrue(chosen, f"no {kinds} bundle in Tests/Interop/players")
        return chosen

    def run_players(self, label, manifest, vtts, kinds=("shaka", "dashjs"), play=False, sidecar=None, periods=(),
                    allowed=None, sequences=False):
        """Asks every bundle of `kinds` for every thumbnail time of each track in `vtts`. dash.js makes a Period's
        thumbnails available once that Period plays, so with `periods` (the starts of Periods after the first) it is
        asked Period by Period, after a seek into each. `allowed(kind, name, t)` may excuse a known player defect.
        With `sequences`, the manifest also lists an I-frame image sequence beside each WebVTT track
        (`iframe-images.mp4` in its folder): every Shaka Player from 4.11 on must show it right too."""
        for kind, name, bundle in self.players_of(*kinds):
            for vtt in vtts:
                cues = self.cues(vtt)
                times = players.probe_times(cues)
                if kind == "dashjs" and periods:
                    bounds = [0, *periods, float("inf")]
                    phases = [(None if i == 0 else bounds[i] + 0.5, [t for t in times if bounds[i] <= t < bounds[i + 1]])
                              for i in range(len(bounds) - 1)]
                else:
                    phases = [(None, times)]
                with self.subTest(player=name, track=vtt):
                    mismatches, excused = [], 0
                    for seek, subset in phases:
                        result = players.ask(DRIVER, SITE, bundle, kind, self.url(manifest), subset,
                                             vtt_url=self.url(sidecar) if sidecar else None, play=play, seek=seek)
                        found = self.check(f"{name}: {label} ({vtt})", result, cues, subset,
                                           shaka=kind == "shaka", sidecar=sidecar is not None)
                        if sequences and kind == "shaka":
                            media = self.url(os.path.join(os.path.dirname(vtt), "iframe-images.mp4"))
                            sequence = self.check_sequence(label, result, cues, subset, media)
                            if sequence is None and reads_image_sequences(name):
                                mismatches.append(f"{name} lists no track for the image sequence {media}")
                            found += sequence or []
                            read_sequence = sequence is not None
                        for t, text in found:
                            if allowed and allowed(kind, name, t):
                                excused += 1
                            else:
                                mismatches.append(f"t={t}: {text}")
                        if play:
                            self.assertIsInstance(result.get("played"), (int, float), f"{name}: {result.get('played')}")
                            self.assertGreaterEqual(result["played"], 1.0, f"{name}: the stream did not play")
                    self.assertEqual(mismatches, [], f"{name}: {label} ({vtt})")
                    note = f", {excused} answers of a known player defect" if excused else ""
                    if sequences and kind == "shaka":
                        note += (", and the I-frame image sequence" if read_sequence
                                 else " (no image sequences before 4.11)")
                    print(f"  {name}: {label}, {vtt}: {len(times)} times, 0 mismatches{note}", file=sys.stderr)


class SplicedTracks(InteropCase):
    """The outputs of `generate --formats vtt,hls,dash` added to the stream's manifests by hand, as docs/cli.md says."""

    @classmethod
    def setUpClass(cls):
        summary = generate(os.path.join(WORK, "dash", "manifest.mpd"), os.path.join(WORK, "dash"),
                           "--formats", "vtt,hls,dash")
        with open(os.path.join(WORK, "dash", "manifest.mpd")) as f:
            mpd = f.read()
        with open(os.path.join(WORK, "dash", "with-thumbnails.mpd"), "w") as f:
            f.write(mpd.replace("</Period>", summary["dash_adaptation_set"] + "\n</Period>"))
        summary = generate(os.path.join(WORK, "hls", "master.m3u8"), os.path.join(WORK, "hls"),
                           "--formats", "vtt,hls")
        with open(os.path.join(WORK, "hls", "master.m3u8")) as f:
            master = f.read()
        with open(os.path.join(WORK, "hls", "with-thumbnails.m3u8"), "w") as f:
            f.write(master.rstrip("\n") + "\n" + summary["image_stream_inf"] + "\n")

    def test_dash_tiles_pasted_into_the_mpd(self):
        self.run_players("DASH thumbnail tiles", "dash/with-thumbnails.mpd", ["dash/thumbnails.vtt"])

    def test_hls_image_playlist_added_to_the_master(self):
        self.run_players("HLS image playlist", "hls/with-thumbnails.m3u8", ["hls/thumbnails.vtt"], kinds=("shaka",))

    def test_webvtt_sidecar(self):
        self.run_players("WebVTT sidecar", "dash/manifest.mpd", ["dash/thumbnails.vtt"], kinds=("shaka",),
                         sidecar="dash/thumbnails.vtt")


class AttachedTracks(InteropCase):
    """`generate --attach`: the stream's own manifest with the tracks added, played as it is written."""

    @classmethod
    def setUpClass(cls):
        cls.summaries = {
            "attach-dash": generate(os.path.join(WORK, "dash", "manifest.mpd"), os.path.join(WORK, "attach-dash"),
                                    "--attach", "--extra-widths", "240"),
            "attach-remote": generate(SITE.url + "dash/manifest.mpd", os.path.join(WORK, "attach-remote"),
                                      "--attach"),
            "attach-periods": generate(os.path.join(WORK, "two-periods", "manifest.mpd"),
                                       os.path.join(WORK, "attach-periods"), "--attach"),
            "attach-mid-sheet": generate(os.path.join(WORK, "two-periods-mid-sheet", "manifest.mpd"),
                                         os.path.join(WORK, "attach-mid-sheet"), "--attach"),
            "attach-hls": generate(os.path.join(WORK, "hls", "master.m3u8"), os.path.join(WORK, "attach-hls"),
                                   "--attach", "--extra-widths", "240"),
            "attach-media": generate(os.path.join(WORK, "hls-ts", "index.m3u8"), os.path.join(WORK, "attach-media"),
                                     "--attach"),
        }

    def test_dash_two_widths(self):
        self.run_players("attached MPD, two widths", "attach-dash/manifest.mpd",
                         ["attach-dash/thumbnails.vtt", "attach-dash/w240/thumbnails.vtt"], kinds=("shaka",),
                         play=True)
        # dash.js shows one image Representation, the one it ranks first by bandwidth: its answers must be that
        # width's track, at every time.
        cues = {vtt: self.cues(vtt) for vtt in ("attach-dash/thumbnails.vtt", "attach-dash/w240/thumbnails.vtt")}
        times = players.probe_times(cues["attach-dash/thumbnails.vtt"])
        for kind, name, bundle in self.players_of("dashjs"):
            result = players.ask(DRIVER, SITE, bundle, kind, self.url("attach-dash/manifest.mpd"), times, play=True)
            self.assertNotIn("error", result, f"{name}: {result.get('error')}")
            first = next((a for a in result["tracks"][0]["answers"] if a), None)
            self.assertIsNotNone(first, f"{name}: no thumbnail at all")
            vtt = next(v for v, c in cues.items() if c[0]["w"] == round(first["w"]))
            mismatches = self.check(f"{name}: attached MPD ({vtt})", result, cues[vtt], times, shaka=False)
            self.assertEqual(mismatches, [], f"{name}: attached MPD ({vtt})")
            self.assertGreaterEqual(result["played"], 1.0, f"{name}: the stream did not play")
            print(f"  {name}: attached MPD, two widths, {vtt}: {len(times)} times, 0 mismatches", file=sys.stderr)

    def test_dash_stream_url_as_input(self):
        with open(os.path.join(WORK, "attach-remote", "manifest.mpd")) as f:
            self.assertIn(f"<BaseURL>{SITE.url}dash/</BaseURL>", f.read())
        self.run_players("attached MPD of a DASH URL", "attach-remote/manifest.mpd", ["attach-remote/thumbnails.vtt"],
                         play=True)

    def test_two_periods(self):
        self.run_players("attached two-Period MPD", "attach-periods/manifest.mpd", ["attach-periods/thumbnails.vtt"],
                         play=True, periods=[20])

    def test_two_periods_the_second_starting_inside_a_sheet(self):
        """The second Period starts at 14 s, inside the first sheet (0-20 s): its set has a SegmentTimeline from that
        sheet. Shaka Player 4.4 and 4.5 cut a timeline's last segment at its Period's end and then spread the sheet's
        tiles over the shorter time, so they misread the sheets that a Period's end cuts (0-20 s in the first Period,
        20-40 s at the end); 4.16 and 5 keep the segment's true end and read every tile right, as dash.js does."""
        with open(os.path.join(WORK, "attach-mid-sheet", "manifest.mpd")) as f:
            mpd = f.read()
        self.assertIn('presentationTimeOffset="14000" startNumber="1"', mpd)

        def shaka4_cut_sheets(kind, name, t):
            old = re.search(r"v4\.([45])\.", name) is not None
            return kind == "shaka" and old and (t < 14 or t >= 20)
        self.run_players("attached two-Period MPD, a Period starting mid-sheet", "attach-mid-sheet/manifest.mpd",
                         ["attach-mid-sheet/thumbnails.vtt"], periods=[14], allowed=shaka4_cut_sheets)

    def test_hls_master_with_an_audio_rendition(self):
        self.run_players("attached HLS master with audio", "attach-hls/master.m3u8",
                         ["attach-hls/thumbnails.vtt", "attach-hls/w240/thumbnails.vtt"], kinds=("shaka",), play=True,
                         sequences=True)

    def test_hls_media_playlist_wrapped_in_a_master(self):
        self.run_players("HLS media playlist wrapped", "attach-media/master.m3u8", ["attach-media/thumbnails.vtt"],
                         kinds=("shaka",), play=True, sequences=True)

    def test_filmstrip_reads_and_plays_what_it_attached(self):
        for folder, manifest in (("attach-dash", "manifest.mpd"), ("attach-periods", "manifest.mpd"),
                                 ("attach-mid-sheet", "manifest.mpd"),
                                 ("attach-hls", "master.m3u8"), ("attach-media", "master.m3u8"),
                                 ("attach-remote", "manifest.mpd")):
            path = os.path.join(WORK, folder, manifest)
            with self.subTest(manifest=f"{folder}/{manifest}"):
                # Filmstrip's reader takes the largest tiles of a manifest with several.
                track = next((os.path.join(WORK, folder, w, "thumbnails.vtt") for w in ("w240", "")
                              if os.path.exists(os.path.join(WORK, folder, w, "thumbnails.vtt"))))
                cues = players.read_vtt(track, "file://" + track)
                for cue in cues:
                    t = round((cue["start"] + cue["end"]) / 2, 3)
                    out = subprocess.run([BIN, "thumbnail", path, "--at", str(t), "--json"], capture_output=True,
                                         text=True)
                    self.assertEqual(out.returncode, 0, out.stderr)
                    answer = json.loads(out.stdout)
                    self.assertAlmostEqual(answer["start"], cue["start"], places=3)
                    self.assertEqual(answer["region"], {"x": cue["x"], "y": cue["y"], "w": cue["w"], "h": cue["h"]})
                    self.assertEqual(os.path.basename(answer["image"]), os.path.basename(cue["uri"]))
                inspect = subprocess.run([BIN, "inspect", path], capture_output=True, text=True)
                self.assertEqual(inspect.returncode, 0, inspect.stderr)
        # Each plays to its end with its audio, all at once (light streams; the verdict is the end state).
        plays = {folder: subprocess.Popen([BIN, "play", os.path.join(WORK, folder, manifest), "--autoplay", "--rate",
                                           "2", "--json"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
                 for folder, manifest in (("attach-dash", "manifest.mpd"), ("attach-periods", "manifest.mpd"),
                                 ("attach-mid-sheet", "manifest.mpd"),
                                          ("attach-hls", "master.m3u8"), ("attach-media", "master.m3u8"))}
        for folder, process in plays.items():
            out, err = process.communicate(timeout=600)
            with self.subTest(play=folder):
                self.assertEqual(process.returncode, 0, err[-2000:])
                self.assertIn('"state": "ended"', out)
                self.assertIn('"audio_played"', out)


class WebPSheets(InteropCase):
    """`generate --image-format webp`: WebP sheets in an attached MPD (image/webp tiles), an attached HLS master and a
    WebVTT sidecar, read by the players and drawn by Chromium."""

    @classmethod
    def setUpClass(cls):
        generate(os.path.join(WORK, "dash", "manifest.mpd"), os.path.join(WORK, "webp-dash"), "--attach",
                 "--image-format", "webp")
        generate(os.path.join(WORK, "hls", "master.m3u8"), os.path.join(WORK, "webp-hls"), "--attach",
                 "--image-format", "webp")

    def test_dash_webp_tiles(self):
        with open(os.path.join(WORK, "webp-dash", "manifest.mpd")) as f:
            mpd = f.read()
        self.assertIn('contentType="image" mimeType="image/webp"', mpd)
        self.assertIn('media="sprite-$Number$.webp"', mpd)
        self.run_players("attached MPD, WebP tiles", "webp-dash/manifest.mpd", ["webp-dash/thumbnails.vtt"], play=True)

    def test_hls_webp_image_playlist(self):
        self.run_players("attached HLS master, WebP sheets", "webp-hls/master.m3u8", ["webp-hls/thumbnails.vtt"],
                         kinds=("shaka",), sequences=True)

    def test_webvtt_sidecar_of_webp_sheets(self):
        self.run_players("WebVTT sidecar, WebP sheets", "dash/manifest.mpd", ["webp-dash/thumbnails.vtt"],
                         kinds=("shaka",), sidecar="webp-dash/thumbnails.vtt")


if __name__ == "__main__":
    unittest.main()
