#!/usr/bin/env python3
"""Makes the scrub traces `FilmstripBench scrub` replays: pointer positions over a seek bar, sampled at 30 Hz.

The traces are synthetic, not recorded: they model four things viewers do with a seek bar on a three-hour video,
with moves that ease in and out over 0.25 to 2 s and rests of 0.3 to 3 s in which the hand trembles a little. Each file is JSON: {"name", "description", "duration": the video's seconds, "samples": [[ms since
the trace started, the time under the pointer in seconds], ...]}. Run from anywhere; the output is deterministic
(a fixed seed), so running it again rewrites the same files.
"""
import json
import math
import os
import random

HERE = os.path.dirname(os.path.abspath(__file__))
DURATION = 10800.0  # three hours
RATE = 30  # samples per second
STEP = 1000 / RATE


def ease(u):
    """Ease-in-out: a hand accelerates, then slows down onto its target."""
    return 0.5 - 0.5 * math.cos(math.pi * max(0.0, min(1.0, u)))


class Trace:
    def __init__(self, name, description, start):
        self.name, self.description = name, description
        self.ms, self.at = 0.0, start
        self.samples = [[0, round(start, 3)]]

    def move(self, target, seconds):
        """Moves the pointer to `target` (video seconds) in `seconds` of wall time."""
        origin, steps = self.at, max(1, round(seconds * RATE))
        for i in range(1, steps + 1):
            self.ms += STEP
            self.at = origin + (target - origin) * ease(i / steps)
            self.samples.append([round(self.ms), round(min(DURATION - 0.001, max(0.0, self.at)), 3)])

    def hold(self, seconds, jitter, rng):
        """Rests near the current position, the hand trembling by up to `jitter` video seconds."""
        centre = self.at
        for _ in range(round(seconds * RATE)):
            self.ms += STEP
            self.at = centre + rng.uniform(-jitter, jitter)
            self.samples.append([round(self.ms), round(min(DURATION - 0.001, max(0.0, self.at)), 3)])
        self.at = centre

    def write(self):
        with open(os.path.join(HERE, self.name + ".json"), "w") as f:
            json.dump({"name": self.name, "description": self.description, "duration": DURATION,
                       "samples": self.samples}, f, separators=(",", ":"))
            f.write("\n")


def main():
    rng = random.Random(20261126)
    # A fast drag from the start to near the end, a look there, and a fast drag back to a third.
    fast = Trace("fast-drag", "a fast drag across the whole bar (1.2 s), a rest, a fast drag back to a third", 0)
    fast.move(DURATION * 0.92, 1.2)
    fast.hold(2.5, 15, rng)
    fast.move(DURATION * 0.33, 0.8)
    fast.hold(3.0, 15, rng)
    fast.write()
    # A slow scan: from 20 minutes in, forward about 40 video seconds per wall second, with pauses and small
    # back-steps, as someone looking for a scene.
    slow = Trace("slow-scan", "a slow scan forward from 20 min, pausing and stepping back now and then", 1200)
    for _ in range(10):
        slow.move(slow.at + rng.uniform(60, 140), rng.uniform(1.0, 2.0))
        slow.hold(rng.uniform(0.3, 1.0), 5, rng)
        if rng.random() < 0.3:
            slow.move(slow.at - rng.uniform(20, 50), 0.4)
    slow.write()
    # Jumps: the pointer goes straight to eight places and rests at each.
    jumps = Trace("jumps", "eight quick moves to far places, resting 1.5 s at each", rng.uniform(0, DURATION))
    for _ in range(8):
        jumps.move(rng.uniform(0, DURATION), 0.25)
        jumps.hold(1.5, 20, rng)
    jumps.write()
    # Hovering near the end: back and forth over the last tenth, as over the credits or a live edge.
    end = Trace("near-end", "hovering back and forth over the last tenth of the bar", DURATION * 0.5)
    end.move(DURATION * 0.95, 0.6)
    for _ in range(6):
        end.move(rng.uniform(DURATION * 0.9, DURATION - 1), rng.uniform(0.6, 1.4))
        end.hold(rng.uniform(0.4, 1.0), 10, rng)
    end.write()


if __name__ == "__main__":
    main()
