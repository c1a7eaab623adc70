"""Filmstrip's commands on a corpus of small odd media files other tools and devices wrote (media/, with SOURCE.md
giving each file's origin and SHA-256, and LICENSE): each file through `inspect`, `frame --exact`, `generate` and,
for audio alone, `play`, judged against the ffmpeg CLI's decode of the same file from its start.

- `inspect` must tell video from audio alone as ffprobe does; a file whose video or audio no decoder reads must exit
  2 with a message naming the codec.
- `frame --exact` at three times: the picture must match the frame ffmpeg decodes from the file's start at the time
  Filmstrip reports (30 dB PSNR or more on grey 160-pixel-wide images; HDR against ffmpeg's tone map by correlation,
  since the tone curves differ: r of 0.99 or more), and that time must be the frame shown at the asked time (the last
  frame at or before it; the first before it starts).
- `generate` must write a track that `inspect --check` passes.
- `play --audio-out` (audio alone, 2 s) must play what ffmpeg decodes: 30 dB SNR or more over the middle of what was
  played, at the same place within 50 ms (the offset is printed; resampling to 48 kHz shifts by a fraction of a
  sample).
- Times: an MP4/MOV file's are on its movie timeline (0 is the movie's start, as players place it); other
  containers' count from the file's first timestamp, as `ffmpeg -ss` does.
- A file whose bitstream ffmpeg itself reports damaged (decode errors from the file's start) is checked for its exit
  status only: a picture or sound, or exit 2 with a message, never a crash or a hang.

Every file that fails a check must be listed in KNOWN with its reason; one that is listed and passes fails the
run too (the list stays true). The table of results is printed at the end (and written to $FILMSTRIP_CORPUS_TABLE).

Run: FILMSTRIP_BIN=.build/release/filmstrip python3 -m unittest discover -s Tests/Corpus -v
"""
import hashlib
import json
import math
import os
import re
import shutil
import subprocess
import tempfile
import unittest
import wave
from concurrent.futures import ThreadPoolExecutor

import numpy

HERE = os.path.dirname(os.path.abspath(__file__))
MEDIA = os.path.join(HERE, "media")
BIN = os.environ.get("FILMSTRIP_BIN", os.path.join(os.getcwd(), ".build", "release", "filmstrip"))
GREY_WIDTH = 160
PLAY_SECONDS = 2.0

# Files whose failure is known, with the reason (check name: reason). A file listed here that passes the check
# fails the run, so the list stays true.
KNOWN = {
    # Sound that differs from the ffmpeg CLI's.
    "mka/opus-5.1.mka:play": "5.1 Opus down-mixed to stereo: Filmstrip's mix (libswresample from the stream's layout) "
                             "and the CLI's `-ac 2` differ; not judged sample for sample",
    "mp4/bbb_6ch_8kHz_opus.ogg:play": "6-channel Opus down-mixed to stereo: as opus-5.1.mka",
    "mp4/sample_eac3joc.mp4:play": "E-AC-3 with joint object coding (Atmos) down-mixed to stereo, and 50 ms earlier "
                                   "than the CLI's: not found yet",
    "ts/sample_eac3joc.ec3:play": "as mp4/sample_eac3joc.mp4",
    "ts/sample_eac3joc.ts:play": "as mp4/sample_eac3joc.mp4",
    "mp4/bbb_1ch_8kHz_aac_lc.m4a:play": "8 kHz AAC: starts 40 ms after the CLI's decode (the edit list's priming at "
                                        "8 kHz); not found yet",
    "flac/bear_32bit.flac:play": "no reference: the ffmpeg CLI writes nothing of 32-bit FLAC (Filmstrip plays it)",
    "mkv/sample_with_opus_audio.mkv:play": "50 ms of Opus: shorter than the comparison needs",
    # Pictures.
    "mp4/dolbyVision-hdr.MOV:frame": "Dolby Vision: neither Filmstrip nor ffmpeg applies the RPU's reshaping, and their "
                                     "tone maps of the base layer differ",
    "mp4/sample_with_color_info.mp4:frame": "HLG HEVC: Filmstrip's tone map and the ffmpeg CLI's (zscale + hable) "
                                            "differ more than the correlation allows (r = 0.98)",
    "mp4/iibbibb_editlist_videoonly.mp4:frame": "open GOPs of I pictures without recovery points under an edit list: at "
                                                "12.35 s Filmstrip shows the picture at 9 s, the ffmpeg CLI's decode "
                                                "from the start the one at 11 s; not found yet",
    "ts/sample_with_sdt.ts:inspect": "4 KB of MPEG-TS whose video packets hold no whole picture: no size to read (the "
                                     "ffmpeg CLI decodes no picture either)",
}


def run(*arguments, timeout=120):
    return subprocess.run([BIN, *arguments], capture_output=True, text=True, timeout=timeout)


def probe(path):
    out = subprocess.run(["ffprobe", "-v", "error", "-show_streams", "-show_format", "-of", "json", path],
                         capture_output=True, text=True)
    try:
        return json.loads(out.stdout or "{}")
    except ValueError:
        return {}


def video_stream(info):
    for stream in info.get("streams", []):
        if stream.get("codec_type") == "video" and not stream.get("disposition", {}).get("attached_pic"):
            return stream
    return None


def audio_streams(info):
    return [s for s in info.get("streams", []) if s.get("codec_type") == "audio"]


def grey(path_or_args, size, extra_filters=""):
    """An image file's pixels as grey bytes of `size`."""
    filters = f"{extra_filters}scale={size[0]}:{size[1]},format=gray"
    return subprocess.run(["ffmpeg", "-v", "error", "-i", path_or_args, "-vf", filters, "-f", "rawvideo", "-"],
                          capture_output=True, check=True).stdout


DECODE_ERRORS = re.compile(rb"error while decoding|Invalid data found|[Cc]orrupt|concealing|Error splitting")


def decode_errors(path, stream):
    """How many errors ffmpeg's own decode of `stream` from the file's start reports."""
    result = subprocess.run(["ffmpeg", "-v", "error", "-nostats", "-i", path, "-map", f"0:{stream['index']}", "-f",
                             "null", "-"], capture_output=True)
    return len(DECODE_ERRORS.findall(result.stderr))


def origin(info):
    """Where a file's times count from: 0 for MP4/MOV (the movie timeline), else its first timestamp."""
    fmt = info.get("format", {})
    if fmt.get("format_name", "").startswith("mov,"):
        return 0.0
    return float(fmt.get("start_time", 0) or 0)


def reference_frames(path, stream, start, size, hdr):
    """Every frame ffmpeg decodes from `path`'s video stream from the file's start, as (seconds from `start`, grey
    bytes of `size`)."""
    tone = ("zscale=t=linear:npl=100,format=gbrpf32le,zscale=p=bt709,tonemap=hable:desat=0,"
            "zscale=t=bt709:m=bt709:r=tv,format=yuv420p,") if hdr else ""
    result = subprocess.run(["ffmpeg", "-v", "info", "-nostats", "-copyts", "-i", path, "-map", f"0:{stream['index']}",
                             "-vf", f"{tone}scale={size[0]}:{size[1]},format=gray,showinfo", "-fps_mode", "passthrough",
                             "-f", "rawvideo", "-"], capture_output=True)
    times = [float(t) - start for t in re.findall(rb"pts_time:\s*([-0-9.e]+)", result.stderr)]
    frame = size[0] * size[1]
    pictures = [result.stdout[k * frame:(k + 1) * frame] for k in range(len(result.stdout) // frame)]
    return list(zip(times, pictures))


def exit_only(result, what):
    """The verdict on a damaged file: a result (exit 0) or a clear refusal (exit 2 with a message)."""
    if result.returncode == 0:
        return f"ok: damaged bitstream ({what}), exit 0"
    if result.returncode == 2 and result.stderr.strip():
        return f"ok: damaged bitstream ({what}), exit 2: {result.stderr.strip().splitlines()[-1][:80]}"
    return f"damaged bitstream ({what}): exit {result.returncode}: {result.stderr.strip()[-200:]}"


def psnr(a, b):
    if len(a) != len(b) or not a:
        return 0.0
    difference = numpy.frombuffer(a, dtype=numpy.uint8).astype(float) - numpy.frombuffer(b, dtype=numpy.uint8)
    total = float(numpy.sum(difference * difference))
    return 99.0 if total == 0 else min(99.0, 10 * math.log10(255 * 255 / (total / len(a))))


def correlation_db(a, b):
    """How alike two grey pictures are whatever their tone curves: -10·log10(1 − r) for their correlation r. Flat
    pictures (nothing to correlate) are compared by PSNR."""
    if len(a) != len(b) or not a:
        return 0.0
    x = numpy.frombuffer(a, dtype=numpy.uint8).astype(float)
    y = numpy.frombuffer(b, dtype=numpy.uint8).astype(float)
    if x.std() < 2 or y.std() < 2:
        return psnr(a, b)
    r = float(numpy.corrcoef(x, y)[0, 1])
    return 99.0 if r >= 1 else min(99.0, -10 * math.log10(1 - r))


def wav_left(path):
    with wave.open(path) as w:
        data = w.readframes(w.getnframes())
        channels, width = w.getnchannels(), w.getsampwidth()
    samples = memoryview(data).cast("h") if width == 2 else []
    return list(samples[::channels])


class Corpus(unittest.TestCase):
    rows = {}

    @classmethod
    def setUpClass(cls):
        cls.root = tempfile.mkdtemp(prefix="filmstrip-corpus-")
        cls.files = sorted(os.path.relpath(os.path.join(d, f), MEDIA)
                           for d, _, names in os.walk(MEDIA) for f in names)

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.root, ignore_errors=True)
        checks = ["inspect", "frame", "generate", "play"]
        lines = ["| file | " + " | ".join(checks) + " |", "|" + "---|" * (len(checks) + 1)]
        counts = {"files": 0, "checks": 0, "passed": 0, "known": 0}
        for name in sorted(cls.rows):
            row = cls.rows[name]
            counts["files"] += 1
            for check in checks:
                if check in row:
                    counts["checks"] += 1
                    counts["passed" if row[check].startswith("ok") else "known"] += 1
            lines.append("| " + " | ".join([name] + [row.get(c, "–") for c in checks]) + " |")
        summary = (f"{counts['files']} files, {counts['checks']} checks: {counts['passed']} passed, "
                   f"{counts['known']} known failures (each with its reason)")
        table = "\n".join(lines + ["", summary])
        print("\n" + table)
        if os.environ.get("FILMSTRIP_CORPUS_TABLE"):
            with open(os.environ["FILMSTRIP_CORPUS_TABLE"], "w") as f:
                f.write(table + "\n")

    def test_sources_are_listed_with_their_hashes(self):
        with open(os.path.join(HERE, "SOURCE.md")) as f:
            listed = dict(re.findall(r"^\| `([^`]+)` \| \d+ \| ([0-9a-f]{64}) \|", f.read(), re.M))
        self.assertEqual(sorted(listed), self.files)
        for name in self.files:
            with open(os.path.join(MEDIA, name), "rb") as f:
                self.assertEqual(hashlib.sha256(f.read()).hexdigest(), listed[name], name)
        self.assertGreaterEqual(len(self.files), 150)

    def test_corpus(self):
        with ThreadPoolExecutor(max_workers=2) as pool:
            results = list(pool.map(self.judge, self.files))
        failures = []
        for name, row in results:
            self.rows[name] = row
            for check, outcome in row.items():
                key = f"{name}:{check}"
                if outcome.startswith("ok") and key in KNOWN:
                    failures.append(f"{key}: listed as known ({KNOWN[key]}) but passes: {outcome}")
                elif not outcome.startswith("ok") and key not in KNOWN:
                    failures.append(f"{key}: {outcome}")
        self.assertEqual(failures, [], "\n" + "\n".join(failures))

    def judge(self, name):
        path = os.path.join(MEDIA, name)
        work = os.path.join(self.root, name.replace("/", "_"))
        os.makedirs(work, exist_ok=True)
        row = {}
        try:
            info = probe(path)
            video = video_stream(info)
            audio = audio_streams(info)
            inspected = run("inspect", path, "--json")
            if inspected.returncode != 0:
                message = inspected.stderr.strip().splitlines()[-1] if inspected.stderr.strip() else ""
                codecs = [s.get("codec_name") or s.get("codec_tag_string") for s in ([video] if video else []) + audio]
                named = [c for c in codecs if c and c.lower() in message.lower()] or (
                    ["a codec FFmpeg does not know"] if "FFmpeg does not know" in message else [])
                if inspected.returncode == 2 and named:
                    row["inspect"] = f"ok: exit 2, names {named[0]}"
                elif inspected.returncode == 2 and message and not video and not audio:
                    kinds = sorted({s.get("codec_type", "?") for s in info.get("streams", [])}) or ["no stream"]
                    row["inspect"] = f"ok: exit 2 (ffprobe finds {', '.join(kinds)}): {message[11:90]}"
                else:
                    row["inspect"] = f"exit {inspected.returncode}: {message[:200]}"
                return name, row
            summary = json.loads(inspected.stdout)
            expected = "video" if video else "audio-only"
            if not video and not audio:
                row["inspect"] = f"ffprobe finds no stream, inspect says {summary['kind']}"
                return name, row
            if summary["kind"] != expected:
                row["inspect"] = f"says {summary['kind']}, ffprobe {expected}"
                return name, row
            row["inspect"] = f"ok: {summary['kind']}"
            if video:
                errors = decode_errors(path, video)
                damage = f"ffmpeg reports {errors} decode errors" if errors else None
                row["frame"] = self.frames(path, info, video, summary, work, damage)
                row["generate"] = self.generate(path, work, damage)
            else:
                errors = decode_errors(path, audio[0])
                rate = int(audio[0].get("sample_rate") or 48000)
                row["play"] = self.play(path, work, f"ffmpeg reports {errors} decode errors" if errors else None, rate)
        except Exception as error:  # noqa: BLE001 - every surprise is a row of the table, not a crash of the run
            row["error"] = f"{type(error).__name__}: {error}"[:200]
        return name, row

    def frames(self, path, info, video, summary, work, damage):
        start = origin(info)
        duration = float(summary.get("duration") or 0)
        times = sorted({0.0, round(duration * 0.45, 3), round(max(0.0, duration - 0.15), 3)})
        hdr = video.get("color_transfer") in ("smpte2084", "arib-std-b67")
        reference = None
        results = []
        for t in times:
            out = os.path.join(work, f"frame-{t}.png")
            answer = run("frame", path, "--at", str(t), "--exact", "--json", "--output", out)
            if damage:
                verdict = exit_only(answer, damage)
                if not verdict.startswith("ok"):
                    return verdict
                results.append(verdict)
                continue
            if answer.returncode != 0:
                return f"at {t}: exit {answer.returncode}: {answer.stderr.strip()[-200:]}"
            frame = json.loads(answer.stdout)
            width, height = frame["width"], frame["height"]
            size = (GREY_WIDTH, max(2, round(GREY_WIDTH * height / width / 2) * 2))
            if reference is None:
                reference = reference_frames(path, video, start, size, hdr)
                if not reference:
                    return "ffmpeg decodes no frame"
            # The frame shown at t: the last at or before it, else the first.
            shown = [k for k, (time, _) in enumerate(reference) if time <= t + 1e-3]
            expected = shown[-1] if shown else 0
            ours = grey(out, size)
            # HDR: the same picture under another tone curve (Filmstrip maps to SDR its own way): compared by
            # correlation, scaled to read like dB (r = 0.999 gives 30).
            measure = correlation_db if hdr else psnr
            scores = [measure(ours, picture) for _, picture in reference]
            best = max(range(len(scores)), key=lambda k: scores[k])
            score = scores[expected]
            floor = 20 if hdr else 30
            same_picture = scores[best] - score < 0.5  # neighbours may be the same picture
            if score < floor or not same_picture:
                return (f"at {t}: {score:.1f} dB against ffmpeg's frame at {reference[expected][0]:.3f} s; best "
                        f"{scores[best]:.1f} dB at {reference[best][0]:.3f} s (reported {frame['time']})")
            if abs(frame["time"] - reference[expected][0]) > 0.002 and not same_picture:
                return f"at {t}: reported {frame['time']}, ffmpeg's frame is at {reference[expected][0]:.3f}"
            results.append(score)
        if damage:
            return results[0] if len(set(results)) == 1 else "; ".join(results)
        return "ok: " + ", ".join(f"{s:.0f}" for s in results) + " dB" + (" (HDR, tone-mapped)" if hdr else "")

    def generate(self, path, work, damage):
        out = os.path.join(work, "track")
        made = run("generate", path, "--output", out, timeout=300)
        if damage:
            return exit_only(made, damage)
        if made.returncode != 0:
            return f"exit {made.returncode}: {made.stderr.strip()[-200:]}"
        track = os.path.join(out, "thumbnails.vtt")
        checked = run("inspect", track, "--check", "--json")
        if checked.returncode != 0:
            return f"inspect --check: exit {checked.returncode}: {checked.stderr.strip()[-200:]}"
        cues = json.loads(checked.stdout).get("cues")
        return f"ok: {cues} cues"

    def play(self, path, work, damage, rate=48000):
        wav = os.path.join(work, "played.wav")
        played = run("play", path, "--autoplay", "--audio-out", wav, "--duration", str(PLAY_SECONDS), "--json",
                     timeout=60)
        if damage:
            return exit_only(played, damage)
        if played.returncode != 0:
            return f"exit {played.returncode}: {played.stderr.strip()[-200:]}"
        reference = os.path.join(work, "reference.wav")
        subprocess.run(["ffmpeg", "-v", "error", "-y", "-i", path, "-ar", "48000", "-ac", "2", "-c:a", "pcm_s16le",
                        reference], check=True)
        ours, theirs = wav_left(wav), wav_left(reference)
        count = min(len(ours), len(theirs))
        if count < 4800:
            return f"{len(ours)} samples played, {len(theirs)} decoded by ffmpeg"
        lag, snr = align(ours, theirs)
        if snr is None:
            # ffmpeg's decode is silent in the middle: so must what was played be, there.
            centre = count // 2
            loud = max((abs(x) for x in ours[centre - 2048:centre + 2048]), default=0)
            return "ok: silence" if loud <= 2 else f"ffmpeg decodes silence, Filmstrip plays sound (peak {loud})"
        where = f"{count / 48000:.2f} s, {lag / 48:+.1f} ms from ffmpeg's"
        # Resampled to 48 kHz: Filmstrip's resampler works from float, the CLI's from the decoder's own format.
        floor = 30 if rate == 48000 else 25
        if snr < floor:
            return f"{snr:.1f} dB against ffmpeg's decode ({where})"
        return f"ok: {snr:.0f} dB ({where})"


def align(ours, theirs, max_lag=2400, window=4096):
    """The shift of `ours` against `theirs` (samples, within `max_lag`) that matches a window in the middle of what
    was played best, and the SNR there; `None` for the SNR when the reference is silent there."""
    ours, theirs = numpy.asarray(ours, dtype=float), numpy.asarray(theirs, dtype=float)
    count = min(len(ours), len(theirs))
    lo, hi = count // 2 - window // 2, count // 2 + window // 2
    reference = theirs[lo:hi]
    signal = float(numpy.sum(reference * reference))
    if signal == 0:
        return 0, None
    lags = [lag for lag in range(-max_lag, max_lag + 1) if lo + lag >= 0 and hi + lag <= len(ours)]
    noises = [float(numpy.sum((ours[lo + lag:hi + lag] - reference) ** 2)) for lag in lags]
    best = min(range(len(lags)), key=lambda k: noises[k])
    noise = noises[best]
    return lags[best], 99.0 if noise == 0 else min(99.0, 10 * math.log10(signal / noise))


if __name__ == "__main__":
    unittest.main()
