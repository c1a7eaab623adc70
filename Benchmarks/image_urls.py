"""Image URLs under load: `filmstrip serve`'s `/ID/thumbnail.jpg?time=T&width=320` against the self-hosters' way,
a small server that runs `ffmpeg -ss T -i FILE -frames:v 1 -vf scale=320:-2` per request, on the same library and
machine, each under wrk at 1, 8 and 64 connections: p50, p95 and p99 latency, requests a second, errors, and the
server's peak resident memory.

The library (made once in bench-output/images): ten 30-second 1920x1080 H.264 videos at 25 fps, five with a
keyframe every 2 s and five every 10 s. "Cold" asks a random video at a random time to the millisecond (nearly every
URL new: a decode each); "warm" cycles through 256 fixed URLs asked once before (answers from the cache).

Run: python3 Benchmarks/image_urls.py .build/release/filmstrip [bench-output/images] [seconds per run]
"""
import http.server
import json
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time
import urllib.parse
import urllib.request

HERE = os.path.dirname(os.path.abspath(__file__))
DURATION = 30
VIDEOS = [f"gop2-{k}.mp4" for k in range(5)] + [f"gop10-{k}.mp4" for k in range(5)]


def make_library(folder):
    os.makedirs(folder, exist_ok=True)
    for k, name in enumerate(VIDEOS):
        path = os.path.join(folder, name)
        if os.path.exists(path):
            continue
        gop = 50 if name.startswith("gop2") else 250
        subprocess.run(
            ["ffmpeg", "-v", "error", "-y", "-nostdin", "-f", "lavfi", "-i",
             f"testsrc2=s=1920x1080:r=25:d={DURATION},hue=h={36 * k}", "-c:v", "libx264", "-preset", "veryfast",
             "-crf", "23", "-g", str(gop), "-keyint_min", str(gop), "-sc_threshold", "0", "-pix_fmt", "yuv420p",
             "-movflags", "+faststart", path + ".partial.mp4"], check=True)
        os.rename(path + ".partial.mp4", path)


class FFmpegPerRequest(http.server.ThreadingHTTPServer):
    """The reference: one `ffmpeg` process per image URL (a thread per connection)."""
    daemon_threads = True

    def __init__(self, library):
        folder = library

        class Handler(http.server.BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_GET(self):
                url = urllib.parse.urlsplit(self.path)
                name = urllib.parse.unquote(url.path.strip("/").split("/")[0])
                query = urllib.parse.parse_qs(url.query)
                time_text = query.get("time", ["0"])[0]
                width = query.get("width", ["320"])[0]
                result = subprocess.run(
                    ["ffmpeg", "-v", "error", "-nostdin", "-ss", time_text, "-i", os.path.join(folder, name),
                     "-frames:v", "1", "-vf", f"scale={width}:-2", "-f", "image2pipe", "-c:v", "mjpeg", "-"],
                    capture_output=True)
                body = result.stdout
                try:
                    self.send_response(200 if result.returncode == 0 and body else 500)
                    self.send_header("Content-Type", "image/jpeg")
                    self.send_header("Content-Length", str(len(body)))
                    self.end_headers()
                    self.wfile.write(body)
                except (BrokenPipeError, ConnectionResetError):
                    pass  # wrk closes its connections at the end of a run

            def log_message(self, *args):
                pass

        super().__init__(("127.0.0.1", 0), Handler)


def wrk(url, connections, seconds, videos, warm=0):
    env = dict(os.environ, FILMSTRIP_VIDEOS=",".join(videos), FILMSTRIP_DURATION=str(DURATION),
               FILMSTRIP_WARM=str(warm))
    threads = 1 if connections == 1 else 2
    out = subprocess.run(
        ["wrk", f"-t{threads}", f"-c{connections}", f"-d{seconds}s", "--timeout", "30s", "-s",
         os.path.join(HERE, "image_urls.lua"), url],
        env=env, capture_output=True, text=True, check=True, cwd=os.path.dirname(HERE)).stdout
    return json.loads(out.strip().splitlines()[-1])


def peak_rss_mb(pid):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    return 0


def row(label, figures):
    print(f"  {label:<44} {figures['p50']:8.1f} {figures['p95']:8.1f} {figures['p99']:8.1f} {figures['rate']:9.1f} "
          f"{figures['errors']:6d}", flush=True)


def animations(url, library):
    """A 5 s animation at 10 frames a second, 320 wide, cold (a new start each time), one at a time: the median
    over ten, beside the ffmpeg CLI making the same animated WebP (`-ss S -t 5 … fps=10,scale=320:-2`)."""
    print("Animations: 5 s, 10 a second, 320 wide, cold, one at a time (median of 10)")
    figures = {}
    for kind in ("webp", "gif"):
        for label, videos in (("2 s GOP", VIDEOS[:5]), ("10 s GOP", VIDEOS[5:])):
            times = []
            for k in range(10):
                start = 1.234 + 2.1 * k + (0.5 if kind == "gif" else 0)
                began = time.perf_counter()
                with urllib.request.urlopen(
                        f"{url}{videos[k % 5]}/animated.{kind}?start={start:.3f}&end={start + 5:.3f}&fps=10"
                        f"&width=320") as answer:
                    answer.read()
                times.append((time.perf_counter() - began) * 1000)
            figures[f"serve {kind} {label}"] = median = sorted(times)[5]
            print(f"  filmstrip serve animated.{kind}, {label:<9} {median:8.1f} ms")
    with tempfile.TemporaryDirectory() as folder:
        times = []
        for k in range(10):
            start = 1.234 + 2.1 * k
            began = time.perf_counter()
            subprocess.run(
                ["ffmpeg", "-v", "error", "-nostdin", "-y", "-ss", f"{start:.3f}", "-t", "5", "-i",
                 os.path.join(library, VIDEOS[k % 5]), "-vf", "fps=10,scale=320:-2", "-c:v", "libwebp_anim",
                 "-loop", "0", os.path.join(folder, "a.webp")], check=True)
            times.append((time.perf_counter() - began) * 1000)
        figures["ffmpeg webp 2 s GOP"] = median = sorted(times)[5]
        print(f"  ffmpeg CLI, animated WebP, 2 s GOP         {median:8.1f} ms")
    return figures


def main():
    binary = os.path.abspath(sys.argv[1])
    work = os.path.abspath(sys.argv[2] if len(sys.argv) > 2 else "bench-output/images")
    seconds = int(sys.argv[3]) if len(sys.argv) > 3 else 10
    library = os.path.join(work, "library")
    make_library(library)
    cache = tempfile.mkdtemp(prefix="filmstrip-bench-images-")
    serve = subprocess.Popen([binary, "serve", library, "--port", "0", "--cache-dir", cache],
                             stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    url = None
    while url is None:
        line = serve.stdout.readline()
        if not line:
            raise SystemExit("serve did not start")
        if line.strip().startswith("http://"):
            url = line.strip()
    reference = FFmpegPerRequest(library)
    threading.Thread(target=reference.serve_forever, daemon=True).start()
    reference_url = f"http://127.0.0.1:{reference.server_address[1]}/"
    results = {}
    try:
        print(f"Image URLs: thumbnail.jpg?time=T&width=320, ten 30 s 1080p H.264 videos, wrk {seconds} s per run")
        print(f"  {'':<44} {'p50 ms':>8} {'p95 ms':>8} {'p99 ms':>8} {'req/s':>9} {'errors':>6}")
        gop2, gop10 = VIDEOS[:5], VIDEOS[5:]
        for label, videos in (("2 s GOP", gop2), ("10 s GOP", gop10)):
            results[f"serve cold 1 {label}"] = figures = wrk(url, 1, seconds, videos)
            row(f"filmstrip serve, cold, 1 connection, {label}", figures)
        for connections in (8, 64):
            results[f"serve cold {connections}"] = figures = wrk(url, connections, seconds, VIDEOS)
            row(f"filmstrip serve, cold, {connections} connections", figures)
        rss_cold = peak_rss_mb(serve.pid)
        results["animations"] = animations(url, library)
        # Warm: the 256 URLs, each asked once first.
        for k in range(256):
            t = (k * 7.919) % (DURATION - 0.5)
            urllib.request.urlopen(f"{url}{VIDEOS[k % len(VIDEOS)]}/thumbnail.jpg?time={t:.3f}&width=320").read()
        for connections in (1, 8, 64):
            results[f"serve warm {connections}"] = figures = wrk(url, connections, seconds, VIDEOS, warm=256)
            row(f"filmstrip serve, warm, {connections} connections", figures)
        rss = peak_rss_mb(serve.pid)
        for connections in (1, 8):
            results[f"ffmpeg cold {connections}"] = figures = wrk(reference_url, connections, seconds, VIDEOS)
            row(f"ffmpeg per request, cold, {connections} connection{'s' if connections > 1 else ''}", figures)
        ratio = results["serve cold 8"]["rate"] / max(0.001, results["ffmpeg cold 8"]["rate"])
        print(f"  throughput at 8 connections, cold: {ratio:.1f}x the ffmpeg-per-request server's")
        print(f"  filmstrip serve's peak resident memory: {rss_cold:.0f} MB after the cold runs, {rss:.0f} MB in all")
        results["rss_mb"] = rss
        with open(os.path.join(work, "image_urls.json"), "w") as f:
            json.dump(results, f, indent=1)
    finally:
        serve.terminate()
        serve.wait()
        reference.shutdown()
        shutil.rmtree(cache, ignore_errors=True)


if __name__ == "__main__":
    main()
