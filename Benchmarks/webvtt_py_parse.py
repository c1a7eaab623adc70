"""Times Python's webvtt-py parsing a WebVTT file held in memory (the reference for `make bench`).

Usage: python3 webvtt_py_parse.py FILE ITERATIONS
Prints one line: "<median seconds per parse> <cue count>".
"""
import sys

import webvtt

from parse_timing import run

if __name__ == "__main__":
    run(lambda text: len(webvtt.from_string(text).captions), sys.argv[1], int(sys.argv[2]))
