"""The HLS I-frame image sequence `filmstrip generate` writes (`--formats iframe-images`, and by default with
`--attach` on an HLS stream), judged by `iframe_images.check` (Apple's appendix and RFC 8216, apart from Filmstrip's
reader) and by its pictures: the video is a grey ramp whose luma rises 7 per second, so each JPEG's grey says which
moment it shows. Then Filmstrip reads it back: `inspect --cues` and `thumbnail` on a master that lists only the image
sequences.

Run: FILMSTRIP_BIN=.build/release/filmstrip python3 -m unittest Tests/Interop/test_iframe_images.py -v
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
import iframe_images  # noqa: E402
from test_players import BIN, encode, time_of_grey  # noqa: E402

INTERVAL = 2


def grey(jpeg, folder):
    """The mean grey level of a JPEG, decoded by ffmpeg."""
    path = os.path.join(folder, "probe.jpg")
    with open(path, "wb") as f:
        f.write(jpeg)
    # 4x4 by area: swscale's reduction of a 320 px picture straight to one pixel gives 0.
    raw = subprocess.run(["ffmpeg", "-v", "error", "-i", path, "-vf", "scale=4:4:flags=area", "-f", "rawvideo",
                          "-pix_fmt", "gray", "-"], check=True, capture_output=True).stdout
    return sum(raw) / len(raw)


def filmstrip(*arguments):
    return subprocess.run([BIN, *arguments], check=True, capture_output=True, text=True).stdout


class IFrameImageSequenceTests(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.folder = tempfile.mkdtemp(prefix="filmstrip-iframe-images")
        cls.clip = os.path.join(cls.folder, "ramp.mp4")
        encode(cls.clip, 0, 30)

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.folder, ignore_errors=True)

    def assert_sequence(self, playlist, width, stream_inf=None):
        """The checker passes; every image shows its entry's moment; the images are `width` wide."""
        problems, images = iframe_images.check(playlist, stream_inf)
        self.assertEqual(problems, [], playlist)
        self.assertEqual(len(images), 15, playlist)
        for start, duration, jpeg in images:
            self.assertEqual(duration, INTERVAL)
            self.assertEqual(iframe_images.jpeg_size(jpeg)[0], width)
            shown = time_of_grey(grey(jpeg, self.folder))
            self.assertTrue(start - 0.5 <= shown < start + duration, f"{playlist}: {start} s shows {shown:.2f} s")

    def test_two_widths(self):
        """`--formats iframe-images` at two widths: a valid sequence per width, the right picture in every entry,
        the master's line in the JSON summary; `inspect --cues` reads it back as iframe-images."""
        out = os.path.join(self.folder, "widths")
        summary = json.loads(filmstrip("generate", self.clip, "--output", out, "--interval", str(INTERVAL),
                                       "--width", "160", "--extra-widths", "320", "--formats", "vtt,iframe-images",
                                       "--json"))
        inf = summary["iframe_stream_inf"]
        self.assertTrue(inf.startswith("#EXT-X-I-FRAME-STREAM-INF:"), inf)
        self.assert_sequence(os.path.join(out, "iframe-images.m3u8"), 160, inf.partition(":")[2])
        self.assert_sequence(os.path.join(out, "w320", "iframe-images.m3u8"), 320)
        cues = json.loads(filmstrip("inspect", os.path.join(out, "iframe-images.m3u8"), "--cues", "--json"))
        self.assertEqual(cues["format"], "iframe-images")
        self.assertEqual(len(cues["cues"]), 15)

    def test_checker_fails(self):
        """The checker is not a rubber stamp: a sample entry that is not mjpg, an entry whose range starts a byte
        late and a tfdt off by a second are each reported."""
        out = os.path.join(self.folder, "damaged")
        filmstrip("generate", self.clip, "--output", out, "--interval", str(INTERVAL), "--formats", "iframe-images")
        playlist = os.path.join(out, "iframe-images.m3u8")
        media = os.path.join(out, "iframe-images.mp4")
        with open(playlist) as f:
            text = f.read()
        with open(media, "rb") as f:
            data = f.read()

        def problems(new_text, new_data):
            with open(playlist, "w") as f:
                f.write(new_text)
            with open(media, "wb") as f:
                f.write(new_data)
            return iframe_images.check(playlist)[0]

        self.assertEqual(problems(text, data), [])
        self.assertTrue(any("mjpg" in p for p in problems(text, data.replace(b"mjpg", b"avc1", 1))))
        ranges = re.findall(r"#EXT-X-BYTERANGE:(\d+)@(\d+)", text)
        length, offset = ranges[3]
        shifted = text.replace(f"#EXT-X-BYTERANGE:{length}@{offset}", f"#EXT-X-BYTERANGE:{length}@{int(offset) + 1}")
        self.assertTrue(any(p.startswith("entry 4") for p in problems(shifted, data)))
        # The fifth image's tfdt (version 1, milliseconds) says one second later.
        tfdt = [m.start() for m in re.finditer(b"tfdt", data)][4]
        time = int.from_bytes(data[tfdt + 8:tfdt + 16], "big")
        moved = data[:tfdt + 8] + (time + 1000).to_bytes(8, "big") + data[tfdt + 16:]
        self.assertTrue(any("entry 5: tfdt" in p for p in problems(text, moved)))

    def test_attach(self):
        """`--attach` on an HLS stream (ffmpeg's HLS muxer) writes the sequences without being asked and lists one
        EXT-X-I-FRAME-STREAM-INF per width; a master that lists only them is read by `thumbnail` at every cue."""
        stream = os.path.join(self.folder, "stream")
        os.makedirs(stream, exist_ok=True)
        subprocess.run(["ffmpeg", "-v", "error", "-y", "-i", self.clip, "-c", "copy", "-f", "hls", "-hls_time", "4",
                        "-hls_playlist_type", "vod", "-master_pl_name", "master.m3u8",
                        os.path.join(stream, "video.m3u8")], check=True)
        out = os.path.join(self.folder, "attached")
        filmstrip("generate", os.path.join(stream, "master.m3u8"), "--output", out, "--interval", str(INTERVAL),
                  "--width", "160", "--extra-widths", "320", "--attach")
        with open(os.path.join(out, "master.m3u8")) as f:
            master = f.read()
        lines = [line for line in master.splitlines() if line.startswith("#EXT-X-I-FRAME-STREAM-INF:")]
        self.assertEqual(len(lines), 2, master)
        for line, width in zip(lines, (160, 320)):
            attributes = iframe_images.attributes(line.partition(":")[2])
            self.assertTrue(attributes["RESOLUTION"].startswith(f"{width}x"), line)
            self.assert_sequence(os.path.join(out, attributes["URI"]), width, line.partition(":")[2])
        # Only the image sequences: the `.tracks` engine takes them when there is no image playlist.
        only = os.path.join(out, "iframes-only.m3u8")
        variant = re.search(r"#EXT-X-STREAM-INF:[^\n]*\n[^\n]*\n", master).group(0)
        with open(only, "w") as f:
            f.write("#EXTM3U\n" + variant + "\n".join(lines) + "\n")
        for t in (0.5, 9.9, 29.5):
            answer = json.loads(filmstrip("thumbnail", only, "--at", str(t), "--json"))
            self.assertEqual(answer["start"], t // INTERVAL * INTERVAL, answer)


if __name__ == "__main__":
    unittest.main()
