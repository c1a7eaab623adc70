"""Times Python's mpegdash package parsing an MPD held in memory (the reference for `make bench`).

Usage: python3 mpegdash_parse.py FILE ITERATIONS
Prints one line: "<median seconds per parse> <SegmentURL count>".
"""
import statistics
import sys
import time

from mpegdash.parser import MPEGDASHParser


def main() -> None:
    path, iterations = sys.argv[1], int(sys.argv[2])
    with open(path, encoding="utf-8") as handle:
        text = handle.read()
    times = []
    count = 0
    for _ in range(iterations):
        started = time.perf_counter()
        mpd = MPEGDASHParser.parse(text)
        lists = [r.segment_lists for p in mpd.periods for a in p.adaptation_sets for r in a.representations]
        count = sum(len(s.segment_urls) for group in lists if group for s in group)
        times.append(time.perf_counter() - started)
    print(f"{statistics.median(times):.9f} {count}")


if __name__ == "__main__":
    main()
