"""Filmstrip's commands on streams other tools wrote (Shaka Packager at test time, and ffmpeg layouts the first
does not write), over HTTP from a loopback server that logs every request: each picture is checked against ffmpeg's
decode of the same source by presentation time (the picture must match the frame shown at that time at 30 dB PSNR
or more, and match it better than any neighbour), and each `frame` against its byte budget.

Run: FILMSTRIP_BIN=.build/release/filmstrip python3 -m unittest discover -s Tests/RealWorld -v
The table of results is printed at the end (and written to $FILMSTRIP_REALWORLD_TABLE when set)."""
import json
import math
import os
import re
import shutil
import subprocess
import tempfile
import unittest

import streams

BIN = os.environ.get("FILMSTRIP_BIN", os.path.join(os.getcwd(), ".build", "debug", "filmstrip"))
# Times asked of every stream: the first frame, inside the first segment, just inside the second, the last frame.
TIMES = [0.0, 3.3, 6.52, 11.95]
BUDGET_FACTOR = 1.5


def run(*arguments, timeout=120):
    return subprocess.run([BIN, *arguments], capture_output=True, text=True, timeout=timeout)


class RealWorldStreams(unittest.TestCase):
    rows = {}

    @classmethod
    def setUpClass(cls):
        cls.root = tempfile.mkdtemp(prefix="filmstrip-realworld-")
        cls.source = streams.source(cls.root)
        cls.streams = streams.build_streams(cls.root, cls.source)
        cls.cut = os.path.join(cls.root, "cut", "clip.ts")
        os.makedirs(os.path.dirname(cls.cut))
        streams.cut_transport_stream(cls.source, cls.cut)
        cls.reference = streams.grey_frames(cls.source)
        cls.references = {}
        cls.site = streams.Site(cls.root)

    @classmethod
    def tearDownClass(cls):
        cls.site.stop()
        shutil.rmtree(cls.root, ignore_errors=True)
        lines = ["| Stream | Made by | inspect | frame --exact (4 times) | frame (keyframe) | thumbnail --engine frames "
                 "| iframes | generate | play | bytes read by frame vs budget |", "|" + "---|" * 10]
        for name in sorted(cls.rows):
            row = cls.rows[name]
            lines.append("| " + " | ".join([name, row.get("made", ""), row.get("inspect", "–"),
                                             row.get("exact", "–"), row.get("keyframe", "–"),
                                             row.get("frames", "–"), row.get("iframes", "–"), row.get("generate", "–"),
                                             row.get("play", "–"),
                                             row.get("bytes", "–")]) + " |")
        table = "\n".join(lines)
        print("\n" + table)
        if os.environ.get("FILMSTRIP_REALWORLD_TABLE"):
            with open(os.environ["FILMSTRIP_REALWORLD_TABLE"], "w") as f:
                f.write(table + "\n")

    # MARK: helpers

    def url(self, name):
        return self.site.url + self.streams[name][0]

    def frames_of(self, name, size=(streams.WIDTH, streams.HEIGHT)):
        """ffmpeg's decode of what `name`'s pictures are judged against: the source, or the stream's own re-encode."""
        media = self.streams[name][2] if len(self.streams[name]) > 2 else self.source
        key = (media, size)
        if key not in self.references:
            self.references[key] = streams.grey_frames(media, size=size)
        return self.references[key]

    def has_audio(self, name):
        return len(self.streams[name]) <= 2

    def row(self, name):
        return self.rows.setdefault(name, {"made": self.streams[name][1] if name in self.streams else ""})

    def match(self, picture, index, frames):
        """Checks that `picture` is frame `index` of `frames`: 30 dB or more, and closer than every neighbour."""
        scores = {k: streams.psnr(picture, frames[k][1]) for k in range(max(0, index - 3), min(len(frames), index + 4))}
        best = max(scores, key=scores.get)
        self.assertEqual(best, index, f"the picture is frame {best}, not frame {index} ({scores})")
        self.assertGreaterEqual(scores[index], 30, f"frame {index}: {scores[index]:.1f} dB")
        return scores[index]

    def frame_index(self, t):
        return min(int(math.floor(t * streams.FPS + 1e-6)), len(self.reference) - 1)

    def video_bytes(self, name):
        """(initialisation bytes, [size of every video segment]) of a stream, from its files."""
        folder = os.path.join(self.root, os.path.dirname(self.streams[name][0]))
        if name == "shaka-dash-ondemand":
            segments = streams.sidx_segments(os.path.join(folder, "video.mp4"))
            return segments[0][0], [size for _, size, _ in segments]
        if name.startswith("ffmpeg-dash-webm"):
            clusters = streams.webm_clusters(os.path.join(folder, "video.webm"))
            return clusters[0][0], [size for _, size in clusters]
        media = [os.path.join(d, f) for d, _, files in os.walk(folder) for f in files
                 if re.search(r"\.(ts|m4s)$", f) and not re.search(r"/[at]/", os.path.join(d, f))]
        init = os.path.join(folder, "v", "init.mp4")
        return (os.path.getsize(init) if os.path.exists(init) else 0), [os.path.getsize(p) for p in media]

    def budget(self, name, log, whole=False):
        """(bytes read, budget): the manifests read, the initialisation data, and the largest video segment (or,
        `whole`, every video segment)."""
        manifests = sum(sent for path, _, sent in log if re.search(r"\.(m3u8|mpd)$", path))
        init, segments = self.video_bytes(name)
        return sum(sent for _, _, sent in log), manifests + init + (sum(segments) if whole else max(segments))

    # MARK: tests

    def test_inspect(self):
        for name in self.streams:
            with self.subTest(name):
                result = run("inspect", self.url(name))
                self.assertEqual(result.returncode, 0, result.stderr)
                self.assertIn("video track", result.stdout)
                self.row(name)["inspect"] = "ok"

    def test_frame_exact(self):
        out = os.path.join(self.root, "exact.png")
        for name in self.streams:
            worst, ratios = 99.0, []
            for t in TIMES:
                with self.subTest(name, t=t):
                    self.site.take()
                    result = run("frame", self.url(name), "--at", str(t), "--exact", "--json", "-o", out)
                    self.assertEqual(result.returncode, 0, result.stderr)
                    answer = json.loads(result.stdout)
                    index = self.frame_index(t)
                    frames = self.frames_of(name)
                    self.assertAlmostEqual(answer["time"], frames[index][0], delta=0.002)
                    worst = min(worst, self.match(streams.grey_image(out), index, frames))
                    read, budget = self.budget(name, self.site.take())
                    self.assertLessEqual(read, BUDGET_FACTOR * budget, f"{read} bytes read, budget {budget}")
                    ratios.append(read / budget)
            self.row(name)["exact"] = f"right frame, ≥ {worst:.0f} dB"
            self.row(name)["bytes"] = f"{min(ratios):.2f}–{max(ratios):.2f}x"

    def test_frame_keyframe(self):
        out = os.path.join(self.root, "key.png")
        for name in self.streams:
            with self.subTest(name):
                result = run("frame", self.url(name), "--at", "7.3", "--json", "-o", out)
                self.assertEqual(result.returncode, 0, result.stderr)
                answer = json.loads(result.stdout)
                index = self.frame_index(6.0)
                self.assertTrue(answer["keyframe"])
                self.assertAlmostEqual(answer["time"], 6.0, delta=0.002)
                score = self.match(streams.grey_image(out), index, self.frames_of(name))
                self.row(name)["keyframe"] = f"keyframe at 6 s, {score:.0f} dB"

    def test_frames_engine(self):
        """I-frame playlists (HLS) and trick-play sets (DASH) as the frames engine reads them."""
        out = os.path.join(self.root, "iframe.png")
        for name in ("shaka-hls-ts", "shaka-hls-fmp4", "shaka-dash-timeline"):
            if name not in self.streams:
                continue
            with self.subTest(name):
                scores = []
                for t in (0.5, 7.0, 11.5):
                    result = run("thumbnail", self.url(name), "--engine", "frames", "--at", str(t), "--json",
                                 "-o", out, "--max-size", f"{streams.WIDTH}x{streams.HEIGHT}")
                    self.assertEqual(result.returncode, 0, result.stderr)
                    answer = json.loads(result.stdout)
                    self.assertLessEqual(answer["start"], t)
                    self.assertIn(answer["source"], ("iframe-playlist", "segments"))
                    scores.append(self.match(streams.grey_image(out), self.frame_index(answer["start"]),
                                             self.reference))
                self.row(name)["frames"] = f"{answer['source']}, ≥ {min(scores):.0f} dB"

    def test_trick_play(self):
        """`play --rate 8` on the streams with I-frame playlists or a trick-play set: keyframes only, to the end."""
        for name in ("shaka-hls-ts", "shaka-hls-fmp4", "shaka-dash-timeline"):
            if name not in self.streams:
                continue
            with self.subTest(name):
                result = run("play", self.url(name), "--autoplay", "--rate", "8", "--json", timeout=120)
                self.assertEqual(result.returncode, 0, result.stderr)
                events = [json.loads(line) for line in result.stdout.splitlines() if line.startswith("{")]
                stats = [e for e in events if e.get("event") == "stats"][-1]
                self.assertEqual(stats["state"], "ended")
                self.assertTrue(stats["keyframes_only"])
                # One picture per keyframe at most (every 2 s), never the frames between.
                self.assertGreater(stats["decoded_frames"], 0)
                self.assertLessEqual(stats["decoded_frames"], streams.DURATION // int(streams.GOP))
                self.assertEqual([e for e in events if e.get("event") == "error"], [])
                self.row(name)["play"] = self.row(name).get("play", "") + f"; 8x: {stats['decoded_frames']} keyframes"

    def test_iframes(self):
        """`filmstrip iframes` on HLS streams of both containers: every entry, its map and its range cut out of the
        original files and handed alone to the ffmpeg CLI, is the keyframe at its time."""
        for name in ("shaka-hls-ts", "shaka-hls-fmp4", "ffmpeg-hls-ac3"):
            if name not in self.streams:
                continue
            with self.subTest(name):
                folder = os.path.join(self.root, "iframes", name)
                result = run("iframes", os.path.join(self.root, self.streams[name][0]), "--output", folder, "--json")
                self.assertEqual(result.returncode, 0, result.stderr)
                entries = self.iframe_entries(json.loads(result.stdout)["playlists"][0]["file"])
                # TS: every keyframe. fMP4: Shaka Packager's fragments are whole 6 s segments of three GOPs, and only
                # a fragment's first keyframe decodes from a range that starts at its moof.
                expected = streams.DURATION // 6 if "fmp4" in name else streams.DURATION // int(streams.GOP)
                self.assertEqual(len(entries), expected)
                scores = []
                for time, media, (offset, length), (map_file, map_range) in entries:
                    with open(map_file, "rb") as f:
                        f.seek(map_range[0])
                        head = f.read(map_range[1])
                    with open(media, "rb") as f:
                        f.seek(offset)
                        body = f.read(length)
                    cut = os.path.join(folder, "entry.bin")
                    with open(cut, "wb") as f:
                        f.write(head + body)
                    decoded = streams.grey_frames(cut)
                    self.assertTrue(decoded, f"the entry at {time} s does not decode alone")
                    scores.append(self.match(decoded[0][1], self.frame_index(time), self.reference))
                self.row(name)["iframes"] = f"{len(entries)} entries, each decodes alone, ≥ {min(scores):.0f} dB"

    @staticmethod
    def iframe_entries(path):
        """[(time, media file, (offset, length), (map file, (offset, length)))] of an I-frame playlist."""
        folder = os.path.dirname(path)
        entries, time, duration, byterange, mapping = [], 0.0, None, None, None
        with open(path) as f:
            for line in f.read().splitlines():
                if line.startswith("#EXT-X-MAP:"):
                    uri = os.path.normpath(os.path.join(folder, re.search(r'URI="([^"]+)"', line).group(1)))
                    found = re.search(r'BYTERANGE="(\d+)@(\d+)"', line)
                    length, offset = found.groups() if found else (os.path.getsize(uri), 0)
                    mapping = (uri, (int(offset), int(length)))
                elif line.startswith("#EXTINF:"):
                    duration = float(line[8:].split(",")[0])
                elif line.startswith("#EXT-X-BYTERANGE:"):
                    length, offset = line[17:].split("@")
                    byterange = (int(offset), int(length))
                elif line and not line.startswith("#"):
                    entries.append((time, os.path.normpath(os.path.join(folder, line)), byterange, mapping))
                    time += duration
        return entries

    def test_generate(self):
        for name in self.streams:
            small = self.frames_of(name, size=(160, 90))
            with self.subTest(name):
                folder = os.path.join(self.root, "generated", name)
                self.site.take()
                result = run("generate", self.url(name), "--output", folder, "--interval", "2", "--json")
                self.assertEqual(result.returncode, 0, result.stderr)
                # A keyframe every 2 s: every video segment is needed, and nothing else (no audio).
                read, budget = self.budget(name, self.site.take(), whole=True)
                self.assertLessEqual(read, BUDGET_FACTOR * budget, f"generate read {read} bytes, budget {budget}")
                summary = json.loads(result.stdout)
                self.assertEqual(summary["thumbnails"], streams.DURATION // 2)
                with open(os.path.join(folder, "thumbnails.vtt")) as f:
                    cues = re.findall(r"([\d:.]+) --> [\d:.]+\n(\S+?)#xywh=(\d+),(\d+),(\d+),(\d+)", f.read())
                self.assertEqual(len(cues), streams.DURATION // 2)
                scores = []
                for start, sheet, x, y, w, h in cues:
                    seconds = sum(float(p) * 60 ** k for k, p in enumerate(reversed(start.split(":"))))
                    tile = streams.grey_image(os.path.join(folder, sheet), size=(160, 90),
                                              crop=(int(x), int(y), int(w), int(h)))
                    scores.append(self.match(tile, self.frame_index(seconds), small))
                self.row(name)["generate"] = (f"{len(cues)} tiles, each its frame, ≥ {min(scores):.0f} dB; "
                                              f"{read / budget:.2f}x budget")

    def test_play(self):
        for name in self.streams:
            with self.subTest(name):
                wav = os.path.join(self.root, name + ".wav")
                result = run("play", self.url(name), "--autoplay", "--json", "--audio-out", wav, timeout=180)
                self.assertEqual(result.returncode, 0, result.stderr)
                events = [json.loads(line) for line in result.stdout.splitlines() if line.startswith("{")]
                stats = [e for e in events if e.get("event") == "stats"][-1]
                self.assertEqual(stats["state"], "ended")
                # Every frame decoded (a loaded machine may drop some from the screen: that is the player's call).
                self.assertEqual(stats["decoded_frames"], streams.FPS * streams.DURATION)
                errors = [e for e in events if e.get("event") == "error"]
                self.assertEqual(errors, [])
                audio = os.path.getsize(wav) if os.path.exists(wav) else 0
                if self.has_audio(name):
                    # 48 kHz 16-bit stereo: the 12 s of sound, less the last AAC frame's rounding.
                    self.assertGreater(audio, 48000 * 4 * (streams.DURATION - 0.5))
                    self.row(name)["play"] = f"{stats['presented_frames']} frames, {audio / 192000:.1f} s audio"
                else:
                    self.row(name)["play"] = f"{stats['presented_frames']} frames (no audio)"

    def test_audio_only(self):
        """Audio-only streams Shaka Packager wrote play to their end: the WAV is the source's AAC decoded, sample for
        sample (> 60 dB once aligned; HLS has no edit list, so its AAC priming, one 1,024-sample frame, plays first),
        with no frame decoded and no error."""
        audio_only, src = streams.build_audio_only(self.root)
        reference_wav = os.path.join(self.root, "audio-reference.wav")
        streams.ffmpeg("-i", src, "-ar", "48000", "-ac", "2", "-c:a", "pcm_s16le", reference_wav)
        reference = streams.wav_samples(reference_wav)
        for name, (entry, description) in audio_only.items():
            with self.subTest(name):
                wav = os.path.join(self.root, name.replace(" ", "-") + ".wav")
                result = run("play", self.site.url + entry, "--autoplay", "--json", "--audio-out", wav, timeout=120)
                self.assertEqual(result.returncode, 0, result.stderr)
                events = [json.loads(line) for line in result.stdout.splitlines() if line.startswith("{")]
                stats = [e for e in events if e.get("event") == "stats"][-1]
                self.assertEqual(stats["state"], "ended")
                self.assertTrue(stats["audio_only"])
                self.assertEqual(stats["decoded_frames"], 0)
                self.assertEqual([e for e in events if e.get("event") == "error"], [])
                played = streams.wav_samples(wav)
                lag, snr = streams.align(played, reference)
                self.assertIn(lag, (0, 1024) if "hls" in name else (0,))
                self.assertGreater(snr, 60, f"{snr:.1f} dB")
                self.assertLess(abs(len(played) - lag - len(reference)), 0.05 * 48000)
                self.rows[name] = {"made": description,
                                   "play": f"{len(played) / 48000:.2f} s of sound, {snr:.0f} dB, {lag} samples late"}

    def test_public_streams(self):
        """Public test streams other packagers made, kept in `public/` with their source and licence (see its
        README): `inspect`, `frame --exact` at four times (each picture against ffmpeg's decode of the same stream:
        the frame at the same distance from the first one, at 30 dB or more and as close as any neighbour),
        `generate` and `play`."""
        public = os.path.join(os.path.dirname(os.path.abspath(__file__)), "public")
        folders = sorted(d for d in os.listdir(public) if os.path.isfile(os.path.join(public, d, "SOURCE.md")))
        self.assertGreaterEqual(len(folders), 4)
        for name in folders:
            with self.subTest(name):
                with open(os.path.join(public, name, "SOURCE.md")) as f:
                    fields = dict(re.findall(r"^([a-z-]+): (.+)$", f.read(), re.M))
                entry = fields["entry"]
                served = os.path.join(self.root, "public", name)
                if not os.path.isdir(served):
                    shutil.copytree(os.path.join(public, name), served)
                url = f"{self.site.url}public/{name}/{entry}"
                row = self.rows.setdefault("public: " + name, {"made": fields["packager"]})
                if re.search(r"\.(m3u8|mpd)$", entry):
                    result = run("inspect", url)
                    self.assertEqual(result.returncode, 0, result.stderr)
                    row["inspect"] = "ok"
                reference = os.path.join(served, fields.get("reference", entry))
                size = streams.video_size(reference)
                frames = streams.grey_frames(reference, size=size)
                self.assertGreater(len(frames), 10)
                span = float(fields.get("span", frames[-1][0] - frames[0][0]))
                out = os.path.join(self.root, "public.png")
                first, scores = None, []
                for fraction in (0.0, 0.3, 0.55, 0.9):
                    result = run("frame", url, "--exact", "--at", f"{fraction * span:.3f}", "--json", "-o", out)
                    self.assertEqual(result.returncode, 0, result.stderr)
                    answer = json.loads(result.stdout)
                    first = answer["time"] if first is None else first
                    picture = streams.grey_image(out, size=size)
                    offset = answer["time"] - first
                    k = min(range(len(frames)), key=lambda i: abs(frames[i][0] - frames[0][0] - offset))
                    near = [streams.psnr(picture, p) for _, p in frames[max(0, k - 3):k + 4]]
                    score = streams.psnr(picture, frames[k][1])
                    self.assertGreaterEqual(score, 30, f"{fraction}: {score:.1f} dB at frame {k}")
                    self.assertGreaterEqual(score, max(near) - 0.5, f"{fraction}: a neighbour matches better")
                    scores.append(score)
                row["exact"] = f"right frame, ≥ {min(scores):.0f} dB"
                folder = os.path.join(self.root, "generated-public", name)
                result = run("generate", url, "--output", folder, "--count", "4", "--json")
                self.assertEqual(result.returncode, 0, result.stderr)
                self.assertEqual(json.loads(result.stdout)["thumbnails"], 4)
                row["generate"] = "4 tiles"
                seconds = fields.get("play-seconds")
                result = run("play", url, "--autoplay", "--json", *(["--duration", seconds] if seconds else []),
                             timeout=180)
                self.assertEqual(result.returncode, 0, result.stderr)
                events = [json.loads(line) for line in result.stdout.splitlines() if line.startswith("{")]
                stats = [e for e in events if e.get("event") == "stats"][-1]
                expected = len(frames) if not seconds else sum(
                    1 for t, _ in frames if t - frames[0][0] < float(seconds) - 0.1)
                if not seconds:
                    self.assertEqual(stats["state"], "ended")
                self.assertGreaterEqual(stats["decoded_frames"], expected - 1)
                row["play"] = f"{stats['decoded_frames']} frames" + (f" in {seconds} s" if seconds else ", ended")

    def test_transport_stream_cut_inside_a_gop(self):
        """A TS that starts inside a GOP and before any PAT/PMT: `frame --exact` answers the frame ffmpeg shows at
        the same time of the file."""
        # Times from the file's start (its earliest stream, the audio here), as Filmstrip counts them and as
        # `ffmpeg -ss` does: ffmpeg's own timestamps (-copyts) less the file's start time. (With the audio left out,
        # ffmpeg's decode would count from the video's first picture instead.)
        start = float(subprocess.run(["ffprobe", "-v", "error", "-show_entries", "format=start_time", "-of", "csv=p=0",
                                      self.cut], capture_output=True, text=True, check=True).stdout.strip() or 0)
        frames = [(t - start, picture) for t, picture in streams.grey_frames(self.cut, extra=("-copyts",))]
        out = os.path.join(self.root, "cut.png")
        scores = []
        for t in (2.6, 4.0, 5.5):
            with self.subTest(t=t):
                result = run("frame", self.cut, "--at", str(t), "--exact", "--json", "-o", out)
                self.assertEqual(result.returncode, 0, result.stderr)
                answer = json.loads(result.stdout)
                index = max(k for k, (pts, _) in enumerate(frames) if pts <= t + 1e-6)
                self.assertAlmostEqual(answer["time"], frames[index][0], delta=0.002)
                scores.append(self.match(streams.grey_image(out), index, frames))
        self.rows["ffmpeg-ts-cut"] = {"made": "ffmpeg, MPEG-TS file cut inside a GOP, no PAT/PMT at its start",
                                      "exact": f"right frame, ≥ {min(scores):.0f} dB"}


if __name__ == "__main__":
    unittest.main()
