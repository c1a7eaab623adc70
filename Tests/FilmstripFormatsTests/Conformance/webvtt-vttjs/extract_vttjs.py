#!/usr/bin/env python3
"""Extract cue-layout cases from mozilla/vtt.js's test suite. Python 3, standard library only.

Usage:
    python3 extract_vttjs.py /path/to/vtt.js [-o cases.json] [--divergent divergent.json] [--table]

/path/to/vtt.js is a work tree of https://github.com/mozilla/vtt.js (for a bare clone:
`mkdir t && git --git-dir=REPO archive HEAD tests | tar -x -C t`).

vtt.js tests pair an input with a reference JSON in each folder's test.js, e.g.
    test.jsonEqualAll("cue-times/left-tab.vtt", "cue-times/with-data.json", onDone);
The reference JSON is what vtt.js's parser produced and was checked in as last-known-good:
{"cues": [{"id", "startTime", "endTime", "text", <settings>...}], "regions": [...]}.

Only the folders whose point is which cues come out and with what timings/ids are read
(FOLDERS below); cuetext/* (cue text markup), dom-shim-tests and vtt-implementation are not.
Every pair that test.js runs is read (an input that no test.js names is ignored).

Each case is written in the shape of ../webvtt-wpt/cases.json:
    {"name", "vtt", "valid", "cues": [{"id", "start", "end"}], "count_only": false}
  vtt    the input file's bytes decoded as UTF-8 (BOM and all kept).
  cues   ids, startTime and endTime of every cue in the reference JSON, in order. vtt.js always states
         them all, so no field is null and count_only is always false.
  valid  vtt.js's JSON does not say whether a file was rejected; it only lists no cues. valid is
         therefore the WebVTT signature rule of the spec (spec_reference.py): false when the file
         has no valid "WEBVTT" signature -- in every such case vtt.js also lists no cues.

vtt.js was written against a 2013-2016 draft of the spec. Each pair is also run through
spec_reference.py (the current W3C parser algorithm, checked against every WPT case); a pair whose
cue count, ids or times differ from it is NOT written to cases.json but to --divergent, with
both results, so that a parser made to follow browsers is not tested against vtt.js's older rules.
"""
import argparse
import hashlib
import json
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import spec_reference  # noqa: E402

FOLDERS = ["file-layout", "cue-times", "cue-settings", "regions", "integration"]
PAIR = re.compile(r"test\.(jsonEqual\w*)\(\s*\"([^\"]+)\"\s*,\s*\"([^\"]+)\"")


def tidy(v):
    return int(v) if float(v).is_integer() else v


def git_blob_id(data):
    return hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("vttjs_root")
    ap.add_argument("-o", "--output", default="cases.json")
    ap.add_argument("--divergent", help="write the pairs vtt.js and the spec disagree on to this file")
    ap.add_argument("--table", action="store_true", help="print a Markdown table of every pair")
    a = ap.parse_args()
    tests = os.path.join(a.vttjs_root, "tests")
    if not os.path.isdir(tests):
        sys.exit("no tests/ under " + a.vttjs_root)

    pairs = []
    for folder in FOLDERS:
        for dirpath, _, files in sorted(os.walk(os.path.join(tests, folder))):
            for f in sorted(files):
                if f == "test.js":
                    js = open(os.path.join(dirpath, f), encoding="utf-8").read()
                    # Commented-out calls are not run; drop // comments before reading.
                    js = re.sub(r"//[^\n]*", "", js)
                    for kind, vtt, ref in PAIR.findall(js):
                        pairs.append((os.path.relpath(os.path.join(dirpath, f), tests), kind, vtt, ref))
    pairs.sort(key=lambda p: p[2])

    cases, divergent, rows = [], [], []
    for testjs, kind, vtt_rel, ref_rel in pairs:
        data = open(os.path.join(tests, vtt_rel), "rb").read()
        ref_raw = open(os.path.join(tests, ref_rel), "rb").read()
        ref = json.loads(ref_raw.decode("utf-8"))
        cues = [{"id": c["id"], "start": c["startTime"], "end": c["endTime"]} for c in ref["cues"]]
        spec = spec_reference.parse_bytes(data)
        valid = spec is not None
        name = os.path.splitext(vtt_rel)[0]
        case = {"name": name, "vtt": data.decode("utf-8"), "valid": valid, "cues": cues if valid else [],
                "count_only": False}
        problems = []
        if not valid and cues:
            problems.append("vtt.js lists %d cues; the spec rejects the signature" % len(cues))
        elif valid:
            if len(spec) != len(cues):
                problems.append("vtt.js %d cues, spec %d" % (len(cues), len(spec)))
            for k, (v, s) in enumerate(zip(cues, spec)):
                for f in ("id", "start", "end"):
                    if v[f] != s[f]:
                        problems.append("cue %d %s: vtt.js %r, spec %r" % (k, f, v[f], tidy(s[f]) if f != "id" else s[f]))
        if problems:
            divergent.append(dict(case, cues=cues, reason="; ".join(problems),
                                  spec_cues=[{"id": c["id"], "start": tidy(c["start"]), "end": tidy(c["end"])}
                                             for c in (spec or [])]))
        else:
            cases.append(case)
        rows.append((name, valid, len(cues), "; ".join(problems), vtt_rel, git_blob_id(data),
                     ref_rel, git_blob_id(ref_raw), testjs))

    with open(a.output, "w", encoding="ascii") as f:
        json.dump(cases, f, indent=1, ensure_ascii=True)
        f.write("\n")
    if a.divergent:
        with open(a.divergent, "w", encoding="ascii") as f:
            json.dump(divergent, f, indent=1, ensure_ascii=True)
            f.write("\n")
    if a.table:
        print("| case | valid | cues | input (blob) | expected JSON (blob) | agrees with spec |")
        print("| --- | --- | --- | --- | --- | --- |")
        for name, valid, n, prob, v, vb, r, rb, t in rows:
            print("| `%s` | %s | %d | `tests/%s` (`%s`) | `tests/%s` (`%s`) | %s |"
                  % (name, "yes" if valid else "no", n, v, vb[:10], r, rb[:10], "no: " + prob if prob else "yes"))
    print("pairs %d: included %d, divergent %d" % (len(pairs), len(cases), len(divergent)), file=sys.stderr)
    for d in divergent:
        print("  divergent %-45s %s" % (d["name"], d["reason"]), file=sys.stderr)


if __name__ == "__main__":
    main()
