"""`make bench`: `filmstrip play --window` as a person sees and hears it, measured by a capture rig: one ffmpeg
process grabs a patch of the window (x11grab, 60 fps) and the PulseAudio null sink's monitor on the same clock, on the
virtual screen and sound card the window tests use (Tests/Window/screen.py).

- A/V offset: a clip with a white flash and a 1 kHz beep at the same instant every 2 s; each flash is paired with its
  beep and the offset is beep minus flash (positive: the sound is late). At rate 1, at rate 1.5, and after seeks;
  ffplay is measured through the same rig at rate 1, which calibrates it (the grab sees a flash up to one capture
  interval, 17 ms, after it is drawn).
- Smoothness: 60 s of 720p60 whose frames carry their number in their colour; the rig counts the frames it saw, the
  player's statistics the frames presented and dropped. ffplay through the same rig again calibrates it.

Timing verdicts do not belong in a suite that must pass on a loaded machine: run this on an idle one.
Usage: python3 Benchmarks/window_sync.py FILMSTRIP_BINARY [WORK_DIR]
"""
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "Tests", "Window"))
import screen as screens  # noqa: E402

BIN = sys.argv[1] if len(sys.argv) > 1 else os.path.join(ROOT, ".build", "release", "filmstrip")
WORK = sys.argv[2] if len(sys.argv) > 2 else tempfile.mkdtemp(prefix="filmstrip-window-bench-")
PATCH = 32
RATE = 48000


def ffmpeg(*arguments):
    subprocess.run(["ffmpeg", "-v", "error", "-y", "-nostdin", *arguments], check=True)


def media():
    os.makedirs(WORK, exist_ok=True)
    flash = os.path.join(WORK, "flash-beep.mp4")
    if not os.path.exists(flash):
        on = "lt(mod(t\\,2)\\,0.04)*gte(t\\,1)"
        ffmpeg("-f", "lavfi", "-i", f"color=c=black:s=640x360:r=25:d=92,drawbox=x=0:y=0:w=iw:h=ih:color=white:t=fill:"
               f"enable='{on}'", "-f", "lavfi", "-i", f"aevalsrc='if({on}\\,0.8*sin(2*PI*1000*t)\\,0)':s=48000:d=92",
               "-c:v", "libx264", "-preset", "veryfast", "-g", "50", "-pix_fmt", "yuv420p", "-c:a", "aac", "-b:a",
               "128k", "-ac", "2", "-movflags", "+faststart", flash + ".part.mp4")
        os.rename(flash + ".part.mp4", flash)
    smooth = os.path.join(WORK, "counter-720p60.mp4")
    if not os.path.exists(smooth):
        ffmpeg("-f", "lavfi", "-i", "nullsrc=s=1280x720:r=60:d=70,format=rgb24,geq=r='20+mod(N,6)*40':"
               "g='20+mod(floor(N/6),6)*40':b='20+mod(floor(N/36),7)*33'", "-f", "lavfi", "-i", "sine=f=440:d=70",
               "-c:v", "libx264", "-preset", "veryfast", "-g", "120", "-pix_fmt", "yuv420p", "-c:a", "aac",
               "-shortest", "-movflags", "+faststart", smooth + ".part.mp4")
        os.rename(smooth + ".part.mp4", smooth)
    return flash, smooth


def capture(screen, area, seconds, path):
    """Grabs `area` at 60 fps and the sink's monitor for `seconds`, both on the wall clock of one process."""
    x, y = area
    # The timestamps are kept as the inputs give them (-copyts: both on the wall clock); each input reads `seconds`.
    subprocess.run(["ffmpeg", "-v", "error", "-y", "-nostdin", "-thread_queue_size", "1024", "-f", "x11grab",
                    "-framerate", "60", "-video_size", f"{PATCH}x{PATCH}", "-t", str(seconds), "-i",
                    f"{screen.display}+{x},{y}", "-thread_queue_size", "1024", "-f", "pulse", "-fragment_size", "1920",
                    "-t", str(seconds), "-i", "filmstrip.monitor", "-copyts", "-c:v", "rawvideo", "-pix_fmt", "rgb24",
                    "-c:a", "pcm_s16le", path], env=screen.env, check=True)


def frames(path):
    """(time, (r, g, b)) of every grabbed frame."""
    times = subprocess.run(["ffprobe", "-v", "error", "-select_streams", "v", "-show_entries", "packet=pts_time",
                            "-of", "csv=p=0", path], capture_output=True, text=True, check=True).stdout.split()
    raw = subprocess.run(["ffmpeg", "-v", "error", "-copyts", "-i", path, "-map", "0:v", "-vsync", "passthrough",
                          "-f", "rawvideo", "-pix_fmt", "rgb24", "-"], capture_output=True, check=True).stdout
    size = PATCH * PATCH * 3
    out = []
    for i, t in enumerate(times):
        chunk = raw[i * size:(i + 1) * size]
        if len(chunk) < size:
            break
        out.append((float(t), tuple(sum(chunk[c::3]) / (PATCH * PATCH) for c in range(3))))
    return out


def audio(path):
    start = float(subprocess.run(["ffprobe", "-v", "error", "-select_streams", "a", "-show_entries",
                                  "packet=pts_time", "-read_intervals", "%+#1", "-of", "csv=p=0", path],
                                 capture_output=True, text=True, check=True).stdout.split()[0])
    raw = subprocess.run(["ffmpeg", "-v", "error", "-copyts", "-i", path, "-map", "0:a", "-f", "s16le", "-ac", "1",
                          "-ar", str(RATE), "-"], capture_output=True, check=True).stdout
    return start, memoryview(raw).cast("h")


def offsets(path):
    video = frames(path)
    flashes = [t for (t, c), (_, p) in zip(video[1:], video) if sum(c) / 3 > 128 >= sum(p) / 3]
    start, samples = audio(path)
    beeps, quiet_until = [], -1
    for i in range(0, len(samples)):
        if abs(samples[i]) > 8000:
            if i > quiet_until:
                beeps.append(start + i / RATE)
            quiet_until = i + RATE // 2
    pairs = []
    for flash in flashes:
        beep = min(beeps, key=lambda b: abs(b - flash), default=None)
        if beep is not None and abs(beep - flash) < 0.5:
            pairs.append((beep - flash) * 1000)
    return pairs


def summary(label, values):
    if not values:
        return f"{label:44s} no events"
    return (f"{label:44s} {len(values):3d} events  median {statistics.median(values):+6.1f} ms  "
            f"min {min(values):+6.1f}  max {max(values):+6.1f}  within ±40 ms: "
            f"{sum(1 for v in values if abs(v) <= 40)}/{len(values)}")


def run_filmstrip(screen, source, seconds, *arguments, patch=(100, 100)):
    player = screens.WindowedPlayer(screen, BIN, source, "--autoplay", *arguments)
    try:
        player.stats(lambda e: e["state"] == "playing")
        left, top, _, _ = player.geometry()
        screen.xdotool("mousemove", str(screens.WIDTH - 1), str(screens.HEIGHT - 1))
        path = os.path.join(WORK, f"capture-{time.time():.0f}.nut")
        capture(screen, (left + patch[0], top + patch[1]), seconds, path)
        stats = [e for e in player.events if e.get("event") == "stats"][-1]
        return path, stats
    finally:
        player.finish()


def run_ffplay(screen, source, seconds, size):
    process = subprocess.Popen(["ffplay", "-v", "error", "-autoexit", "-noborder", "-left", "0", "-top", "0", "-x",
                                str(size[0]), "-y", str(size[1]), source], env=screen.env,
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        time.sleep(1.5)
        path = os.path.join(WORK, f"ffplay-{time.time():.0f}.nut")
        capture(screen, (100, 100), seconds, path)
        return path
    finally:
        process.terminate()
        process.wait()


def counter_frames(path):
    """How many distinct frames of the 60 fps counter the rig saw, and the intervals between changes (ms)."""
    seen, changes, previous = set(), [], None
    for t, (r, g, b) in frames(path):
        digits = []
        for value, step, count in zip((r, g, b), (40, 40, 33), (6, 6, 7)):
            k = round((value - 20) / step)
            digits.append(k if 0 <= k < count and abs(value - (20 + k * step)) <= step / 2.5 else None)
        if None in digits:
            continue
        n = digits[0] + digits[1] * 6 + digits[2] * 36
        if n != previous:
            seen.add((n, len(changes) // 252))
            changes.append(t)
            previous = n
    intervals = [(b - a) * 1000 for a, b in zip(changes, changes[1:])]
    return len(changes), intervals


def main():
    flash, smooth = media()
    screen = screens.Screen()
    report = []
    try:
        for label, arguments, seconds in (
                ("filmstrip, rate 1", [], 44),
                ("filmstrip, rate 1.5", ["--rate", "1.5"], 30),
                ("filmstrip, rate 1, a seek every 6 s", [f"--seek {t}@{at}".split()
                                                         for t, at in ((30, 6), (8, 12), (60, 18), (20, 24), (70, 30),
                                                                       (40, 36))], 42)):
            flat = [a for pair in arguments for a in (pair if isinstance(pair, list) else [pair])]
            path, _ = run_filmstrip(screen, flash, seconds, *flat)
            report.append(summary(label, offsets(path)))
        report.append(summary("ffplay, rate 1 (the rig's calibration)", offsets(run_ffplay(screen, flash, 44,
                                                                                             (960, 540)))))
        path, stats = run_filmstrip(screen, smooth, 60)
        seen, intervals = counter_frames(path)
        report.append(f"filmstrip, 720p60 for 60 s: the rig saw {seen} frame changes of 3600; the player presented "
                      f"{stats['presented_frames']} of {stats['decoded_frames']} decoded, dropped "
                      f"{stats['dropped_frames']}; change interval {statistics.mean(intervals):.1f} ms mean, "
                      f"{statistics.pstdev(intervals):.1f} ms deviation")
        seen, intervals = counter_frames(run_ffplay(screen, smooth, 60, (960, 540)))
        report.append(f"ffplay, 720p60 for 60 s: the rig saw {seen} frame changes of 3600; change interval "
                      f"{statistics.mean(intervals):.1f} ms mean, {statistics.pstdev(intervals):.1f} ms deviation")
    finally:
        screen.stop()
    print("Window output: A/V offset (beep minus flash) and smoothness, through the capture rig")
    for line in report:
        print("  " + line)


if __name__ == "__main__":
    main()
