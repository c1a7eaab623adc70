"""`make bench`: `filmstrip play --window` as a person sees and hears it, measured by a capture rig: one ffmpeg
process grabs a patch of the window (x11grab) and the PulseAudio null sink's monitor on the same clock, on the
virtual screen and sound card the window tests use (Tests/Window/screen.py).

- A/V offset: a clip with a white flash and a 1 kHz beep at the same instant every 2 s; each flash is paired with its
  beep and the offset is beep minus flash (positive: the sound is late). At rates 1 (three runs), 0.5, 1.5 and 2, and
  after seeks; ffplay is measured through the same rig at rate 1. The grab runs at 59.94 fps so its phase moves from
  flash to flash (a flash is grabbed up to one interval, 16.7 ms, after it is on screen). The window's timing trace (FILMSTRIP_WINDOW_TRACE) splits each offset into its parts: the sound
  (heard against the device latency estimate), the player's schedule, the window's draw and the screen-to-grab time.
  The device latency the rig measured is then given to the window (FILMSTRIP_AUDIO_LATENCY_MS) for a calibrated run.
- Smoothness: 60 s of 720p60 whose frames carry their number in their colour, grabbed at 120 fps; the rig counts the
  frames it saw and the frames skipped between them, the player's statistics the frames presented and dropped, the
  trace the intervals between the window's presents. ffplay through the same rig again.

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
# The A/V grab runs at 59.94 fps: 2 s between flashes is then no whole number of grab intervals, so the grab's phase
# moves from flash to flash (at 60 fps every flash of a run would be seen the same time after it is drawn). The
# smoothness grab runs at 120 fps: at 60 it would sample a 60 fps picture in phase with it and miss frames whose
# change falls on a grab.
SYNC_GRAB = "60000/1001"
SMOOTH_GRAB = "120"


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


def capture(screen, area, seconds, path, framerate="60"):
    """Grabs `area` at `framerate` and the sink's monitor for `seconds`, both on the wall clock of one process."""
    x, y = area
    # The timestamps are kept as the inputs give them: -copyts (both on the wall clock), -fps_mode passthrough and a
    # microsecond time base (each grab keeps its own time; the CLI would otherwise round them onto the grid of the
    # frame rate it guesses from the first grabs, 60 fps in some runs); each input reads `seconds`.
    subprocess.run(["ffmpeg", "-v", "error", "-y", "-nostdin", "-thread_queue_size", "1024", "-f", "x11grab",
                    "-framerate", framerate, "-video_size", f"{PATCH}x{PATCH}", "-t", str(seconds), "-i",
                    f"{screen.display}+{x},{y}", "-thread_queue_size", "1024", "-f", "pulse", "-fragment_size", "1920",
                    "-t", str(seconds), "-i", "filmstrip.monitor", "-copyts", "-fps_mode", "passthrough",
                    "-enc_time_base:v", "1:1000000", "-c:v", "rawvideo", "-pix_fmt", "rgb24",
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
    """The monitor's samples (mono) and the wall time of the first. The `pulse` input stamps each packet with the
    time it was captured less the stream's latency, smoothed by a filter that takes a while to settle (its first
    stamps can be 60 ms off the rest): the start is the median over every packet of its stamp less the samples
    before it, not the first packet's stamp."""
    packets = subprocess.run(["ffprobe", "-v", "error", "-select_streams", "a", "-show_entries",
                              "packet=pts_time,duration_time", "-of", "csv=p=0", path],
                             capture_output=True, text=True, check=True).stdout.split()
    starts, before = [], 0.0
    for packet in packets:
        stamp, length = (float(v) for v in packet.split(",")[:2])
        starts.append(stamp - before)
        before += length
    start = statistics.median(starts)
    raw = subprocess.run(["ffmpeg", "-v", "error", "-copyts", "-i", path, "-map", "0:a", "-f", "s16le", "-ac", "1",
                          "-ar", str(RATE), "-"], capture_output=True, check=True).stdout
    return start, memoryview(raw).cast("h")


def offsets(path):
    flashes, beeps = beeps_and_flashes(path)
    pairs = []
    for flash in flashes:
        beep = min(beeps, key=lambda b: abs(b - flash), default=None)
        if beep is not None and abs(beep - flash) < 0.5:
            pairs.append((beep - flash) * 1000)
    return pairs


def beeps_and_flashes(path):
    """The rig's flash times (the grab's first bright frame) and beep onsets (the monitor's first loud sample)."""
    video = frames(path)
    flashes = [t for (t, c), (_, p) in zip(video[1:], video) if sum(c) / 3 > 128 >= sum(p) / 3]
    start, samples = audio(path)
    beeps, quiet_until = [], -1
    for i in range(0, len(samples)):
        if abs(samples[i]) > 8000:
            if i > quiet_until:
                beeps.append(start + i / RATE)
            quiet_until = i + RATE // 2
    return flashes, beeps


def read_trace(path, rate=1.0):
    """The window's timing trace (FILMSTRIP_WINDOW_TRACE): the device's estimated latency; when each media time was
    pulled by the audio device (the pull's wall time plus the sample's place in it; at `rate`, a second of sound holds
    `rate` seconds of media); when each picture was handed over and presented."""
    pulls, presented, handed, fifo, device = [], [], [], [], None
    with open(path) as f:
        for line in f:
            fields = line.split()
            stamp, kind = float(fields[0]), fields[1]
            if kind == "device":
                device = float(fields[5])
            elif kind == "presented":
                presented.append((float(fields[2]), stamp))
            elif kind == "handed":
                handed.append((float(fields[2]), stamp))
            elif kind == "queued":
                fifo.append([float(fields[2]), float(fields[3])])
            elif kind == "cleared":
                fifo = []
            elif kind == "pulled":
                length, short = float(fields[2]), float(fields[3])
                need, place = length - short, 0.0
                while need > 1e-9 and fifo:
                    media, seconds = fifo[0]
                    take = min(need, seconds)
                    pulls.append((media, media + take * rate, stamp, place, length))
                    place += take
                    need -= take
                    if take >= seconds - 1e-9:
                        fifo.pop(0)
                    else:
                        fifo[0] = [media + take * rate, seconds - take]
    return device, pulls, presented, handed


def decompose(trace, path, rate=1.0):
    """Splits each flash-to-beep offset into its parts, from the window's trace and the rig's capture. For the flash
    and beep at media time T: the sound's error (when the rig heard the beep, against when the window's latency
    estimate said it would be heard: the device pulled it at a known time, and plays it the estimated latency later,
    less the pull's own length), the player's schedule (that estimate against when the frame of T was handed to the
    window), the window's own time (handed to presented) and the display's (presented to seen by the rig, which
    includes the grab's interval). Returns the estimated device latency and the four lists (ms)."""
    device, pulls, presented, handed = read_trace(trace, rate)
    flashes, beeps = beeps_and_flashes(path)
    sound, schedule, window, display = [], [], [], []
    for k in range(1, 200):
        media = 2.0 * k
        pulled = [p for p in pulls if p[0] <= media < p[1]]
        shown = [s for t, s in presented if abs(t - media) < 0.005]
        given = [s for t, s in handed if abs(t - media) < 0.005]
        if not pulled or not shown or not given or device is None:
            continue
        start, _, stamp, place, length = pulled[-1]
        at = stamp + place + (media - start) / rate
        model = at + device - length
        beep = min(beeps, key=lambda b: abs(b - at), default=None)
        flash = min(flashes, key=lambda f: abs(f - shown[-1]), default=None)
        if beep is None or flash is None or abs(beep - at) > 0.5 or abs(flash - shown[-1]) > 0.5:
            continue
        sound.append((beep - model) * 1000)
        schedule.append((model - given[-1]) * 1000)
        window.append((shown[-1] - given[-1]) * 1000)
        display.append((flash - shown[-1]) * 1000)
    return device, (sound, schedule, window, display)


def parts(device, lists):
    """One line: the median of each part of the offset, and the device latency the rig measured."""
    sound, schedule, window, display = lists
    if not sound:
        return "    (no events in the trace)"
    med = statistics.median
    return (f"    parts (medians): sound heard {med(sound):+.1f} ms against the estimate; frame handed {med(schedule):+.1f} "
            f"ms before it; window draw {med(window):.1f} ms; on screen to grabbed {med(display):.1f} ms. Device "
            f"latency estimated {device * 1000:.1f} ms, measured {device * 1000 + med(sound):.1f} ms")


def summary(label, values):
    if not values:
        return f"{label:44s} no events"
    return (f"{label:44s} {len(values):3d} events  median {statistics.median(values):+6.1f} ms  "
            f"min {min(values):+6.1f}  max {max(values):+6.1f}  within ±40 ms: "
            f"{sum(1 for v in values if abs(v) <= 40)}/{len(values)}")


def run_filmstrip(screen, source, seconds, *arguments, patch=(100, 100), framerate="60", trace=None, env=None):
    """Plays `source` in a window and captures it; with `trace`, the window writes its timing trace there."""
    env = {**(env or {}), **({"FILMSTRIP_WINDOW_TRACE": trace} if trace else {})}
    player = screens.WindowedPlayer(screen, BIN, source, "--autoplay", *arguments, env=env)
    try:
        player.stats(lambda e: e["state"] == "playing")
        left, top, _, _ = player.geometry()
        screen.xdotool("mousemove", str(screens.WIDTH - 1), str(screens.HEIGHT - 1))
        path = os.path.join(WORK, f"capture-{time.time():.0f}.nut")
        capture(screen, (left + patch[0], top + patch[1]), seconds, path, framerate)
        stats = [e for e in player.events if e.get("event") == "stats"][-1]
        return path, stats
    finally:
        player.finish()


def run_ffplay(screen, source, seconds, size, framerate="60"):
    process = subprocess.Popen(["ffplay", "-v", "error", "-autoexit", "-noborder", "-left", "0", "-top", "0", "-x",
                                str(size[0]), "-y", str(size[1]), source], env=screen.env,
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        time.sleep(1.5)
        path = os.path.join(WORK, f"ffplay-{time.time():.0f}.nut")
        capture(screen, (100, 100), seconds, path, framerate)
        return path
    finally:
        process.terminate()
        process.wait()


def counter_frames(path):
    """What the rig saw of the 60 fps counter: the frame changes, the frames skipped between them (a change by more
    than one, counted by the number of the counter, which wraps at 252), and the intervals between changes (ms)."""
    changes, skipped, previous = [], 0, None
    for t, (r, g, b) in frames(path):
        digits = []
        for value, step, count in zip((r, g, b), (40, 40, 33), (6, 6, 7)):
            k = round((value - 20) / step)
            digits.append(k if 0 <= k < count and abs(value - (20 + k * step)) <= step / 2.5 else None)
        if None in digits:
            continue
        n = digits[0] + digits[1] * 6 + digits[2] * 36
        if n != previous:
            step = (n - previous) % 252 if previous is not None else 1
            if step > 30:
                # A jump further (or back) is a colour read wrong, not 30 frames skipped in half a second: the
                # frame is not counted, and the next one is compared with the last one read right.
                continue
            skipped += step - 1
            changes.append(t)
            previous = n
    intervals = [(b - a) * 1000 for a, b in zip(changes, changes[1:])]
    return len(changes), skipped, intervals


def main():
    flash, smooth = media()
    screen = screens.Screen()
    report, measured = [], None
    try:
        # The offset of one run moves with where the display's path puts its pictures (about ±10 ms from run to run
        # on Xvfb): three runs at rate 1, and their events together.
        pooled, pooled_parts = [], ([], [], [], [])
        for label, arguments, seconds, rate in (
                ("filmstrip, rate 1 (1 of 3)", [], 44, 1.0),
                ("filmstrip, rate 1 (2 of 3)", [], 44, 1.0),
                ("filmstrip, rate 1 (3 of 3)", [], 44, 1.0),
                ("filmstrip, rate 0.5", ["--rate", "0.5"], 42, 0.5),
                ("filmstrip, rate 1.5", ["--rate", "1.5"], 30, 1.5),
                ("filmstrip, rate 2", ["--rate", "2"], 30, 2.0),
                ("filmstrip, rate 1, a seek every 6 s", [f"--seek {t}@{at}".split()
                                                         for t, at in ((30, 6), (8, 12), (60, 18), (20, 24), (70, 30),
                                                                       (40, 36))], 42, 1.0)):
            flat = [a for pair in arguments for a in (pair if isinstance(pair, list) else [pair])]
            trace = os.path.join(WORK, f"trace-{len(report)}.txt")
            path, _ = run_filmstrip(screen, flash, seconds, *flat, framerate=SYNC_GRAB, trace=trace)
            values = offsets(path)
            report.append(summary(label, values))
            if rate == 1:
                # (At other rates the tempo filter holds sound the trace does not place.)
                device, lists = decompose(trace, path)
                report.append(parts(device, lists))
            if "of 3" in label:
                pooled += values
                for whole, part in zip(pooled_parts, lists):
                    whole += part
                if label.endswith("(3 of 3)"):
                    report.append(summary("filmstrip, rate 1, the three runs", pooled))
                    report.append(parts(device, pooled_parts))
                    if pooled_parts[0]:
                        measured = device * 1000 + statistics.median(pooled_parts[0])
        if measured:
            # The device latency the rig measured, given to the window: the calibrated offset.
            path, _ = run_filmstrip(screen, flash, 44, framerate=SYNC_GRAB,
                                    env={"FILMSTRIP_AUDIO_LATENCY_MS": f"{measured:.1f}"})
            report.append(summary(f"filmstrip, rate 1, FILMSTRIP_AUDIO_LATENCY_MS={measured:.1f}", offsets(path)))
        report.append(summary("ffplay, rate 1 (the rig's calibration)",
                              offsets(run_ffplay(screen, flash, 44, (960, 540), SYNC_GRAB))))
        trace = os.path.join(WORK, "trace-smooth.txt")
        path, stats = run_filmstrip(screen, smooth, 60, framerate=SMOOTH_GRAB, trace=trace)
        seen, skipped, intervals = counter_frames(path)
        presents = [s for _, s in read_trace(trace)[2]]
        shown = [(b - a) * 1000 for a, b in zip(presents, presents[1:])]
        report.append(f"filmstrip, 720p60 for 60 s: the rig saw {seen} frame changes, {skipped} frames skipped "
                      f"({100 * skipped / max(1, seen + skipped):.2f} %); the player presented "
                      f"{stats['presented_frames']} of {stats['decoded_frames']} decoded, dropped "
                      f"{stats['dropped_frames']}; change interval {statistics.mean(intervals):.1f} ms mean, "
                      f"{statistics.pstdev(intervals):.1f} ms deviation; the window's presents "
                      f"{statistics.mean(shown):.1f} ms apart, {statistics.pstdev(shown):.1f} ms deviation, "
                      f"{sum(1 for v in shown if v > 25)} more than 25 ms apart")
        seen, skipped, intervals = counter_frames(run_ffplay(screen, smooth, 60, (960, 540), SMOOTH_GRAB))
        report.append(f"ffplay, 720p60 for 60 s: the rig saw {seen} frame changes, {skipped} frames skipped "
                      f"({100 * skipped / max(1, seen + skipped):.2f} %); change interval "
                      f"{statistics.mean(intervals):.1f} ms mean, {statistics.pstdev(intervals):.1f} ms deviation")
    finally:
        screen.stop()
    print("Window output: A/V offset (beep minus flash) and smoothness, through the capture rig")
    for line in report:
        print("  " + line)


if __name__ == "__main__":
    main()
