#!/usr/bin/env python3
"""Checks that Package.swift declares exactly what each target imports: every module a target imports is one of its
declared dependencies (or the platform's own), and every declared dependency is imported somewhere in the target.
Exits 1 and lists the differences otherwise. Run by `make lint`."""
import json
import os
import re
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
# Modules of the toolchain and the system, never declared.
PLATFORM = {"Foundation", "FoundationEssentials", "FoundationNetworking", "Glibc", "Musl", "Darwin", "Dispatch",
            "Synchronization", "Testing", "XCTest", "_Concurrency", "os"}
IMPORT = re.compile(
    r"^\s*(?:@[A-Za-z_]+(?:\([^)]*\))?\s+)*(?:(?:public|package|internal|fileprivate|private)\s+)?import\s+"
    r"(?:(?:struct|class|enum|protocol|func|var|let|typealias)\s+)?([A-Za-z_][A-Za-z0-9_]*)", re.M)


def source_imports(directory):
    found = set()
    for folder, _, files in os.walk(directory):
        for name in files:
            if name.endswith(".swift"):
                with open(os.path.join(folder, name), encoding="utf-8") as f:
                    text = f.read()
                # Only real import lines: not the ones inside multi-line string literals.
                text = re.sub(r'"""(?:.|\n)*?"""', "", text)
                found.update(IMPORT.findall(text))
    return found


package = json.loads(subprocess.check_output(["swift", "package", "dump-package"], cwd=ROOT))
problems = []
for target in package["targets"]:
    if target["type"] == "system":
        continue
    default = "Tests" if target["type"] == "test" else "Sources"
    directory = os.path.join(ROOT, target.get("path") or os.path.join(default, target["name"]))
    declared = {list(dep.values())[0][0] for dep in target["dependencies"]}
    imported = source_imports(directory) - PLATFORM
    for module in sorted(imported - declared):
        problems.append(f"{target['name']} imports {module}, which Package.swift does not declare for it")
    for module in sorted(declared - imported):
        problems.append(f"{target['name']} declares {module}, which none of its files imports")
for line in problems:
    print("check-imports:", line, file=sys.stderr)
sys.exit(1 if problems else 0)
