#!/usr/bin/env python3
"""Refuses task-group children typed as tuples (`withTaskGroup(of: (Int, X).self)` and the like): under -O the
Swift 6.1-6.3 compilers can corrupt a tuple returned from a child task (swiftlang/swift#91911, merged and reverted by
#92155), which made a release build of `filmstrip gallery` trap. Children return a struct (`Indexed` in FilmstripSync).
Exits 1 and lists the places otherwise. Run by `make lint`."""
import os
import re
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PATTERN = re.compile(r"(?:with(?:Throwing)?(?:Discarding)?TaskGroup\s*\(\s*of:\s*\(|(?:Throwing)?TaskGroup\s*<\s*\()")
problems = []
for top in ("Sources", "Tests", "Benchmarks", "Examples", "Fuzz"):
    for folder, _, files in os.walk(os.path.join(ROOT, top)):
        for name in files:
            if not name.endswith(".swift"):
                continue
            path = os.path.join(folder, name)
            with open(path, encoding="utf-8") as f:
                for number, line in enumerate(f, 1):
                    if PATTERN.search(line):
                        problems.append(f"{os.path.relpath(path, ROOT)}:{number}: a task group whose children return a "
                                        "tuple (return a struct, such as FilmstripSync's Indexed)")
for problem in problems:
    print(problem, file=sys.stderr)
sys.exit(1 if problems else 0)
