"""Times Python's mpegdash package parsing an MPD held in memory (the reference for `make bench`).

Usage: python3 mpegdash_parse.py FILE ITERATIONS
Prints one line: "<median seconds per parse> <SegmentURL count>".
"""
import sys

from mpegdash.parser import MPEGDASHParser

from parse_timing import run


def parse(text: str) -> int:
    mpd = MPEGDASHParser.parse(text)
    lists = [r.segment_lists for p in mpd.periods for a in p.adaptation_sets for r in a.representations]
    return sum(len(s.segment_urls) for group in lists if group for s in group)


if __name__ == "__main__":
    run(parse, sys.argv[1], int(sys.argv[2]))
