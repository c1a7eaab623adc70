"""Times Python's webvtt-py parsing a WebVTT file held in memory (the reference for `make bench`).

Usage: python3 webvtt_py_parse.py FILE ITERATIONS
Prints one line: "<median seconds per parse> <cue count>".
"""
import statistics
import sys
import time

import webvtt


def main() -> None:
    path, iterations = sys.argv[1], int(sys.argv[2])
    with open(path, encoding="utf-8") as handle:
        text = handle.read()
    times = []
    count = 0
    for _ in range(iterations):
        started = time.perf_counter()
        captions = webvtt.from_string(text)
        count = len(captions.captions)
        times.append(time.perf_counter() - started)
    print(f"{statistics.median(times):.9f} {count}")


if __name__ == "__main__":
    main()
