"""The timing loop shared by the Python reference parsers that `make bench` runs.

Each script passes a function that parses the text and returns how many entries it found; `run` reads the
file, parses it `iterations` times and prints one line: "<median seconds per parse> <entry count>".
"""
import statistics
import time
from typing import Callable


def run(parse: Callable[[str], int], path: str, iterations: int) -> None:
    with open(path, encoding="utf-8") as handle:
        text = handle.read()
    times = []
    count = 0
    for _ in range(iterations):
        started = time.perf_counter()
        count = parse(text)
        times.append(time.perf_counter() - started)
    print(f"{statistics.median(times):.9f} {count}")
