"""Times Python's m3u8 package parsing an HLS playlist held in memory (the reference for `make bench`).

Usage: python3 m3u8_parse.py FILE BASE-URI ITERATIONS
Prints one line: "<median seconds per parse> <segment count>".
"""
import statistics
import sys
import time

import m3u8


def main() -> None:
    path, base, iterations = sys.argv[1], sys.argv[2], int(sys.argv[3])
    with open(path, encoding="utf-8") as handle:
        text = handle.read()
    times = []
    count = 0
    for _ in range(iterations):
        started = time.perf_counter()
        playlist = m3u8.loads(text, uri=base)
        count = len(playlist.segments)
        times.append(time.perf_counter() - started)
    print(f"{statistics.median(times):.9f} {count}")


if __name__ == "__main__":
    main()
