"""A virtual screen and sound card for the window tests: Xvfb, a PulseAudio server with a null sink, and the tools
that look at them (ffmpeg's x11grab for the pixels, xdotool for keys and the pointer); and `filmstrip play --window`
run under them, its JSON events read as they come."""
import json
import os
import shutil
import subprocess
import tempfile
import threading
import time

WIDTH, HEIGHT = 1280, 720


class Screen:
    """Xvfb on a free display number with the Openbox window manager, and PulseAudio with a null sink named `filmstrip`. A reader of the sink's
    monitor runs at low latency for as long as the screen does: without a client asking for a low latency, the null
    sink renders in 2-second blocks, so a stream on it would start up to 2 s late (real sound cards do not)."""

    def __init__(self):
        self.work = tempfile.mkdtemp(prefix="filmstrip-screen-")
        self.processes = []
        number = next(n for n in range(90, 190) if not os.path.exists(f"/tmp/.X11-unix/X{n}")
                      and not os.path.exists(f"/tmp/.X{n}-lock"))
        self.display = f":{number}"
        self.spawn(["Xvfb", self.display, "-screen", "0", f"{WIDTH}x{HEIGHT}x24", "-nolisten", "tcp"])
        deadline = time.time() + 20
        while not os.path.exists(f"/tmp/.X11-unix/X{number}"):
            if time.time() > deadline:
                raise RuntimeError("Xvfb did not start")
            time.sleep(0.05)
        # A window manager, as on a desktop: fullscreen is a request to it (EWMH), which Openbox honours.
        self.env = dict(os.environ, DISPLAY=self.display)
        self.spawn(["openbox", "--sm-disable", "--config-file", "/dev/null"])
        runtime = os.path.join(self.work, "pulse")
        os.makedirs(runtime)
        socket = os.path.join(runtime, "native")
        self.env = dict(os.environ, DISPLAY=self.display, XDG_RUNTIME_DIR=runtime, PULSE_SERVER=f"unix:{socket}")
        self.env.pop("WAYLAND_DISPLAY", None)
        self.spawn(["pulseaudio", "-n", "--daemonize=no", "--exit-idle-time=-1", "--use-pid-file=no",
                    "--load=module-null-sink sink_name=filmstrip rate=48000",
                    f"--load=module-native-protocol-unix auth-anonymous=1 socket={socket}"])
        deadline = time.time() + 20
        while subprocess.run(["pactl", "info"], env=self.env, capture_output=True).returncode != 0:
            if time.time() > deadline:
                raise RuntimeError("PulseAudio did not start")
            time.sleep(0.1)
        self.spawn(["parec", "--latency-msec=20", "-d", "filmstrip.monitor", "--raw"], stdout=subprocess.DEVNULL)
        while "parec" not in subprocess.run(["pactl", "list", "source-outputs"], env=self.env, capture_output=True,
                                            text=True).stdout:
            if time.time() > deadline:
                raise RuntimeError("the null sink's monitor cannot be read")
            time.sleep(0.1)

    def spawn(self, command, **options):
        options.setdefault("stdout", subprocess.DEVNULL)
        process = subprocess.Popen(command, stderr=subprocess.DEVNULL, env=getattr(self, "env", None), **options)
        self.processes.append(process)
        return process

    def grab(self, x, y, width, height):
        """The screen's pixels in a rectangle, as rows of RGB bytes."""
        result = subprocess.run(
            ["ffmpeg", "-v", "error", "-f", "x11grab", "-video_size", f"{width}x{height}", "-i",
             f"{self.display}+{x},{y}", "-frames:v", "1", "-f", "rawvideo", "-pix_fmt", "rgb24", "-"],
            env=self.env, capture_output=True, check=True)
        return Pixels(result.stdout, width, height)

    def save(self, path, area=(0, 0, WIDTH, HEIGHT)):
        """Saves a PNG of `area` (x, y, width, height; by default the whole screen)."""
        x, y, width, height = area
        subprocess.run(["ffmpeg", "-v", "error", "-y", "-f", "x11grab", "-video_size", f"{width}x{height}", "-i",
                        f"{self.display}+{x},{y}", "-frames:v", "1", path], env=self.env, check=True)

    def xdotool(self, *arguments):
        return subprocess.run(["xdotool", *arguments], env=self.env, capture_output=True, text=True,
                              timeout=30).stdout

    def stop(self):
        for process in reversed(self.processes):
            process.terminate()
        for process in self.processes:
            try:
                process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                process.kill()
        shutil.rmtree(self.work, ignore_errors=True)


class Pixels:
    def __init__(self, data, width, height):
        self.data, self.width, self.height = data, width, height

    def at(self, x, y):
        i = (y * self.width + x) * 3
        return tuple(self.data[i:i + 3])

    def mean(self, x, y, width, height):
        total = [0, 0, 0]
        for row in range(y, y + height):
            start = (row * self.width + x) * 3
            chunk = self.data[start:start + width * 3]
            for c in range(3):
                total[c] += sum(chunk[c::3])
        count = width * height
        return tuple(t / count for t in total)

    def lit_box(self, threshold=40):
        """The bounding box (x, y, width, height) of the pixels brighter than `threshold` in some channel."""
        xs, ys = [], []
        for y in range(0, self.height, 2):
            row = self.data[y * self.width * 3:(y + 1) * self.width * 3]
            lit = [x for x in range(0, self.width, 2) if max(row[x * 3:x * 3 + 3]) > threshold]
            if lit:
                xs += [lit[0], lit[-1]]
                ys.append(y)
        if not xs:
            return None
        return min(xs), min(ys), max(xs) - min(xs) + 2, max(ys) - min(ys) + 2


class WindowedPlayer:
    """`filmstrip play SOURCE --window --json` on `screen`; events are kept as they come."""

    def __init__(self, screen, binary, source, *arguments, env=None):
        self.screen = screen
        self.events = []
        self.condition = threading.Condition()
        self.process = subprocess.Popen([binary, "play", source, "--window", "--json", *arguments],
                                        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                        env={**screen.env, **(env or {})})
        self.stderr = []
        self.readers = [threading.Thread(target=self._read, daemon=True),
                        threading.Thread(target=lambda: self.stderr.extend(self.process.stderr), daemon=True)]
        for reader in self.readers:
            reader.start()
        self.window = None
        deadline = time.time() + 30
        while not self.window:
            found = screen.xdotool("search", "--name", " - Filmstrip$").split()
            if found:
                self.window = found[0]
            elif time.time() > deadline or self.process.poll() is not None:
                raise AssertionError(f"no window: {''.join(self.stderr)}")
            else:
                time.sleep(0.1)

    def _read(self):
        for line in self.process.stdout:
            try:
                event = json.loads(line)
            except ValueError:
                continue
            with self.condition:
                self.events.append(event)
                self.condition.notify_all()

    def wait_for(self, predicate, timeout=30, after=0):
        """The first event from index `after` on for which `predicate` holds."""
        deadline = time.time() + timeout
        with self.condition:
            while True:
                for event in self.events[after:]:
                    if predicate(event):
                        return event
                left = deadline - time.time()
                # A player that exited has said everything once its output is read to the end.
                if left <= 0 or self.process.poll() is not None and not self.readers[0].is_alive():
                    shown = [{k: v for k, v in e.items() if k in ("t", "event", "action", "from", "to", "state", "position",
                                                                "time")} for e in self.events[after:][-16:]]
                    raise AssertionError(f"timed out; the last events: {shown}; {''.join(self.stderr)}")
                self.condition.wait(min(left, 0.2))

    def mark(self):
        with self.condition:
            return len(self.events)

    def action(self, name, after=0, timeout=30):
        return self.wait_for(lambda e: e.get("event") == "window" and e.get("action") == name, timeout, after)

    def stats(self, predicate, after=0, timeout=30):
        return self.wait_for(lambda e: e.get("event") == "stats" and predicate(e), timeout, after)

    def geometry(self):
        """The window's drawable area on the screen: x, y, width, height (inside the window manager's frame)."""
        info = subprocess.run(["xwininfo", "-id", self.window], env=self.screen.env, capture_output=True, text=True,
                              timeout=30).stdout
        values = {key.strip(): value.strip() for key, value in
                  (line.split(":", 1) for line in info.splitlines() if ":" in line)}
        return (int(values["Absolute upper-left X"]), int(values["Absolute upper-left Y"]), int(values["Width"]),
                int(values["Height"]))

    def key(self, name):
        self.screen.xdotool("windowfocus", "--sync", self.window)
        self.screen.xdotool("key", name)

    def pointer(self, x, y):
        """Moves the pointer to (`x`, `y`) in the window, in two steps (a motion inside the window first)."""
        left, top, _, _ = self.geometry()
        self.screen.xdotool("mousemove", str(left + x), str(top + y - 1))
        self.screen.xdotool("mousemove", str(left + x), str(top + y))

    def click(self):
        self.screen.xdotool("click", "1")

    def grab(self):
        x, y, width, height = self.geometry()
        return self.screen.grab(x, y, width, height)

    def finish(self, timeout=30):
        """Presses q and returns the exit code."""
        if self.process.poll() is None:
            self.key("q")
        try:
            return self.process.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.process.kill()
            raise

    def kill(self):
        if self.process.poll() is None:
            self.process.kill()
            self.process.wait()
        # The readers end at the pipes' end; then the pipes are closed.
        for reader in self.readers:
            reader.join(timeout=10)
        for stream in (self.process.stdout, self.process.stderr):
            stream.close()
