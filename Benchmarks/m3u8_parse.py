"""Times Python's m3u8 package parsing an HLS playlist held in memory (the reference for `make bench`).

Usage: python3 m3u8_parse.py FILE BASE-URI ITERATIONS
Prints one line: "<median seconds per parse> <segment count>".
"""
import sys

import m3u8

from parse_timing import run

if __name__ == "__main__":
    base = sys.argv[2]
    run(lambda text: len(m3u8.loads(text, uri=base).segments), sys.argv[1], int(sys.argv[3]))
