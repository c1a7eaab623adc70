"""Scrub previews as an mpv user gets them: hover-to-preview time (median and p95) and bytes fetched per preview,
`filmstrip previews` (what Extras/mpv/filmstrip.lua talks to) beside the way mpv's thumbnailer scripts work (a second
mpv, paused, writing each frame it shows to an image file, seeked over its JSON IPC to the hovered time by keyframe),
on the same inputs, machine and link.

Inputs (made once in bench-output/scrub): a 2-minute 1280x720 test pattern at 3 Mbit/s with a keyframe every 2 s, as
an MP4 with its index at the end (ffmpeg's default), as HLS with 6 s MPEG-TS segments and I-frame playlists (written
by `filmstrip iframes`), and as the same HLS without them. The remote ones are served over loopback with 20 ms added
before every answer and bodies sent at 50 Mbit/s. Each run hovers 20 times in a fixed pseudo-random order; "first"
is from starting the process to the first preview (process start, opening the source, the first keyframe).

Run: python3 Benchmarks/scrub_previews.py .build/release/filmstrip [bench-output/scrub]
"""
import json
import os
import random
import socket
import statistics
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "Tests", "Interop"))
import players  # noqa: E402

DURATION = 120
HOVERS = 20
WIDTH, HEIGHT = 240, 135


def ffmpeg(*arguments):
    subprocess.run(["ffmpeg", "-v", "error", "-y", "-nostdin", *arguments], check=True)


def make_inputs(binary, work):
    video = os.path.join(work, "pattern.mp4")
    if not os.path.exists(video):
        ffmpeg("-f", "lavfi", "-i", f"testsrc2=s=1280x720:r=25:d={DURATION}", "-c:v", "libx264", "-preset", "veryfast",
               "-b:v", "3M", "-g", "50", "-keyint_min", "50", "-sc_threshold", "0", "-pix_fmt", "yuv420p",
               video + ".partial.mp4")
        os.rename(video + ".partial.mp4", video)
    for name, iframes in (("hls", True), ("hls-segments", False)):
        folder = os.path.join(work, "site", name)
        if os.path.exists(os.path.join(folder, "master.m3u8")):
            continue
        os.makedirs(folder, exist_ok=True)
        ffmpeg("-i", video, "-c", "copy", "-f", "hls", "-hls_time", "6", "-hls_playlist_type", "vod",
               "-master_pl_name", "master.partial.m3u8", os.path.join(folder, "index.m3u8"))
        if iframes:
            subprocess.run([binary, "iframes", os.path.join(folder, "master.partial.m3u8"), "--output", folder],
                           check=True, capture_output=True)
            os.replace(os.path.join(folder, "master.m3u8"), os.path.join(folder, "master.m3u8.tmp"))
            os.remove(os.path.join(folder, "master.partial.m3u8"))
            os.replace(os.path.join(folder, "master.m3u8.tmp"), os.path.join(folder, "master.m3u8"))
        else:
            os.replace(os.path.join(folder, "master.partial.m3u8"), os.path.join(folder, "master.m3u8"))
    os.makedirs(os.path.join(work, "site"), exist_ok=True)
    link = os.path.join(work, "site", "pattern.mp4")
    if not os.path.exists(link):
        os.link(video, link)
    return video


def hover_times():
    chooser = random.Random(46)
    return [round(chooser.uniform(1, DURATION - 1), 2) for _ in range(HOVERS)]


def filmstrip_run(binary, source, site, scratch):
    """Times each preview from `filmstrip previews`; returns (first, [later], bytes per preview)."""
    output = os.path.join(scratch, "preview.bgra")
    before = site.bytes_out
    started = time.perf_counter()
    process = subprocess.Popen([binary, "previews"], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    times = []
    for i, t in enumerate(hover_times()):
        asked = time.perf_counter()
        process.stdin.write(json.dumps({"id": i, "source": source, "at": t, "width": WIDTH, "height": HEIGHT,
                                        "output": output}) + "\n")
        process.stdin.flush()
        answer = json.loads(process.stdout.readline())
        if "error" in answer:
            raise RuntimeError(f"{source} at {t}: {answer['error']}")
        times.append(time.perf_counter() - (started if i == 0 else asked))
    process.stdin.close()
    process.wait()
    return times[0], times[1:], (site.bytes_out - before) / HOVERS


def mpv_run(source, site, scratch):
    """The same hovers through a second mpv seeking by keyframe, its frames written to an image file."""
    output = os.path.join(scratch, "reference.yuv")
    sock = os.path.join(scratch, "mpv.sock")
    for path in (output, sock):
        if os.path.exists(path):
            os.remove(path)
    before = site.bytes_out
    times = hover_times()
    started = time.perf_counter()
    process = subprocess.Popen(
        ["mpv", "--no-config", "--idle=yes", "--pause", "--keep-open=always", f"--input-ipc-server={sock}",
         "--really-quiet", "--no-terminal", "--osc=no", "--load-scripts=no", "--no-audio", "--no-sub",
         "--hr-seek=no", "--demuxer-readahead-secs=0", "--demuxer-max-bytes=128KiB", "--vd-lavc-skiploopfilter=all",
         "--vd-lavc-fast", "--hwdec=no", f"--vf=scale={WIDTH}:{HEIGHT}", "--ovc=rawvideo", "--of=image2",
         "--ofopts=update=1", f"--o={output}", f"--start={times[0]}", source])

    def written():
        deadline = time.perf_counter() + 60
        while not os.path.exists(output):
            if time.perf_counter() > deadline:
                raise RuntimeError(f"mpv wrote no frame for {source}")
            time.sleep(0.001)

    written()
    first = time.perf_counter() - started
    while not os.path.exists(sock):
        time.sleep(0.01)
    channel = socket.socket(socket.AF_UNIX)
    channel.connect(sock)
    events = channel.makefile("r")
    later = []
    for t in times[1:]:
        asked = time.perf_counter()
        channel.sendall((json.dumps({"command": ["seek", t, "absolute+keyframes"]}) + "\n").encode())
        # The seek is over, and its frame written, when playback restarts (paused: with the new frame shown).
        for line in events:
            if json.loads(line).get("event") == "playback-restart":
                break
        later.append(time.perf_counter() - asked)
    channel.sendall(b'{"command": ["quit"]}\n')
    channel.close()
    process.wait(timeout=30)
    return first, later, (site.bytes_out - before) / HOVERS


def main():
    binary = os.path.abspath(sys.argv[1])
    work = os.path.abspath(sys.argv[2] if len(sys.argv) > 2 else "bench-output/scrub")
    os.makedirs(work, exist_ok=True)
    video = make_inputs(binary, work)
    site = players.Site(os.path.join(work, "site"), delay=0.02, rate=50e6 / 8)
    scratch = tempfile.mkdtemp(prefix="filmstrip-scrub-")
    cases = [("local MP4", video), ("MP4 over HTTP", site.url + "pattern.mp4"),
             ("HLS + I-frames", site.url + "hls/master.m3u8"), ("HLS, segments", site.url + "hls-segments/master.m3u8")]
    print(f"Scrub previews, {HOVERS} hovers over a 720p 3 Mbit/s stream; remote: 20 ms + 50 Mbit/s per request")
    print(f"{'input':<16} {'tool':<10} {'first':>8} {'median':>8} {'p95':>8} {'KB/preview':>11}")
    try:
        for name, source in cases:
            results = {}
            for tool, run in (("filmstrip", lambda: filmstrip_run(binary, source, site, scratch)),
                              ("mpv", lambda: mpv_run(source, site, scratch))):
                first, later, per = run()
                later.sort()
                median = statistics.median(later)
                p95 = later[min(len(later) - 1, round(0.95 * (len(later) - 1)))]
                results[tool] = (first, median, per)
                print(f"{name:<16} {tool:<10} {first * 1000:7.0f}ms {median * 1000:6.0f}ms {p95 * 1000:6.0f}ms "
                      f"{per / 1024:10.0f}")
            f, m = results["filmstrip"], results["mpv"]
            bytes_ratio = f"{m[2] / f[2]:.1f}x fewer bytes" if f[2] else "no bytes fetched"
            print(f"{'':<16} {'ratio':<10} first {m[0] / f[0]:.1f}x sooner, median {m[1] / f[1]:.1f}x faster, "
                  f"{bytes_ratio}")
    finally:
        site.stop()


if __name__ == "__main__":
    main()
