"""What Common Encryption costs in playback: `filmstrip play` of the same 1080p stream packaged by Shaka Packager
clear and encrypted (`cenc` and `cbcs`, DASH, video and audio), with the key, each played headless from start to end
at its own pace; the CPU time of the process (user + system, from the kernel's accounting of the child) and the ratio
to the clear stream's. Five rounds, the three layouts taken in turn in each (so a slower moment of the machine falls on
all of them), the median of each.

Run: python3 Benchmarks/decryption.py .build/release/filmstrip [bench-output/decryption]
"""
import os
import resource
import statistics
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "Tests", "RealWorld"))
import streams  # noqa: E402

KID = "00112233445566778899aabbccddeeff"
KEY = "0123456789abcdef0123456789abcdef"
SECONDS = 20


def package(work):
    source = os.path.join(work, "source.mp4")
    if not os.path.exists(source):
        streams.ffmpeg("-f", "lavfi", "-i", f"testsrc2=s=1920x1080:r=25:d={SECONDS}", "-f", "lavfi", "-i",
                       f"sine=f=440:d={SECONDS}", "-c:v", "libx264", "-preset", "veryfast", "-g", "50",
                       "-keyint_min", "50", "-sc_threshold", "0", "-pix_fmt", "yuv420p", "-c:a", "aac", "-shortest",
                       source)
    layouts = {}
    for name, extra in (("clear", []), ("cenc", ["cenc"]), ("cbcs", ["cbcs"])):
        out = os.path.join(work, name)
        manifest = os.path.join(out, "manifest.mpd")
        layouts[name] = manifest
        if os.path.exists(manifest):
            continue
        arguments = [streams.packager(),
                     f"in={source},stream=video,init_segment={out}/v/init.mp4,segment_template={out}/v/$Number$.m4s",
                     f"in={source},stream=audio,init_segment={out}/a/init.mp4,segment_template={out}/a/$Number$.m4s",
                     "--segment_duration", "2", "--generate_static_live_mpd", "--mpd_output", manifest, "--quiet"]
        if extra:
            arguments += ["--enable_raw_key_encryption", "--keys", f"label=:key_id={KID}:key={KEY}",
                          "--protection_scheme", extra[0], "--clear_lead", "0"]
        subprocess.run(arguments, check=True, capture_output=True)
    return layouts


def cpu_seconds(binary, manifest, keyed):
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    arguments = [binary, "play", manifest, "--autoplay"]
    if keyed:
        arguments += ["--key", f"{KID}:{KEY}"]
    subprocess.run(arguments, check=True, capture_output=True, timeout=SECONDS * 4)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def main():
    binary = os.path.abspath(sys.argv[1])
    work = os.path.abspath(sys.argv[2] if len(sys.argv) > 2 else "bench-output/decryption")
    os.makedirs(work, exist_ok=True)
    layouts = package(work)
    print(f"Decryption in playback: {SECONDS} s of 1080p25 H.264 + AAC, DASH by Shaka Packager, played to the end")
    runs = {name: [] for name in layouts}
    for _ in range(5):
        for name, manifest in layouts.items():
            runs[name].append(cpu_seconds(binary, manifest, name != "clear"))
    medians = {name: statistics.median(times) for name, times in runs.items()}
    for name, seconds in medians.items():
        print(f"  {name:<6} CPU {seconds:6.2f} s   {seconds / medians['clear']:.3f}x the clear stream's")


if __name__ == "__main__":
    main()
