"""Download throughput against the ffmpeg CLI: the same HLS rendition (60 s of 720p H.264 + AAC in 1 s MPEG-TS
segments) fetched over loopback from a server that waits 50 ms before each answer (a distant origin), by
`filmstrip download` (four files at a time, each verified and journaled) and by `ffmpeg -i URL -c copy` (one segment
after another). Five rounds, the two taken in turn; medians, and the ratio.

Run: python3 Benchmarks/download.py .build/release/filmstrip [bench-output/download]
"""
import os
import shutil
import statistics
import subprocess
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "Tests", "RealWorld"))
import streams  # noqa: E402

SECONDS = 60
LATENCY = 0.05
ROUNDS = 5


def make(work):
    playlist = os.path.join(work, "stream", "index.m3u8")
    if os.path.exists(playlist):
        return playlist
    os.makedirs(os.path.dirname(playlist), exist_ok=True)
    streams.ffmpeg("-f", "lavfi", "-i", f"testsrc2=s=1280x720:r=25:d={SECONDS}", "-f", "lavfi", "-i",
                   f"sine=f=440:d={SECONDS}", "-c:v", "libx264", "-preset", "veryfast", "-b:v", "2500k", "-g", "25",
                   "-keyint_min", "25", "-sc_threshold", "0", "-pix_fmt", "yuv420p", "-c:a", "aac", "-shortest",
                   "-f", "hls", "-hls_time", "1", "-hls_playlist_type", "vod", "-hls_segment_filename",
                   os.path.join(work, "stream", "seg_%03d.ts"), playlist)
    return playlist


def timed(arguments):
    start = time.perf_counter()
    subprocess.run(arguments, check=True, capture_output=True, timeout=600)
    return time.perf_counter() - start


def main():
    binary = os.path.abspath(sys.argv[1])
    work = os.path.abspath(sys.argv[2] if len(sys.argv) > 2 else "bench-output/download")
    os.makedirs(work, exist_ok=True)
    playlist = make(work)
    size = sum(os.path.getsize(os.path.join(work, "stream", f)) for f in os.listdir(os.path.join(work, "stream")))
    site = streams.Site(os.path.join(work, "stream"), latency=LATENCY)
    url = site.url + "index.m3u8"
    ours, theirs = [], []
    try:
        for _ in range(ROUNDS):
            target = os.path.join(work, "out")
            shutil.rmtree(target, ignore_errors=True)
            ours.append(timed([binary, "download", url, "--output", target]))
            site.take()
            copy = os.path.join(work, "copy.ts")
            theirs.append(timed(["ffmpeg", "-v", "error", "-y", "-i", url, "-c", "copy", "-f", "mpegts", copy]))
            site.take()
    finally:
        site.stop()
    a, b = statistics.median(ours), statistics.median(theirs)
    print(f"Download of {SECONDS} s of 720p HLS ({size / 1e6:.1f} MB, {len(os.listdir(os.path.join(work, 'stream'))) - 1} "
          f"segments), {LATENCY * 1000:.0f} ms per request, median of {ROUNDS}:")
    print(f"  filmstrip download   {a:6.2f} s  {size / a / 1e6:6.1f} MB/s")
    print(f"  ffmpeg -c copy       {b:6.2f} s  {size / b / 1e6:6.1f} MB/s")
    print(f"  ratio                {b / a:6.2f}x faster (target >= 3x)")


if __name__ == "__main__":
    main()
