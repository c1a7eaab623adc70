#!/usr/bin/env python3
"""Extract WebVTT file-parsing conformance cases from a web-platform-tests checkout.

Usage:
    python3 extract_wpt.py /path/to/wpt [-o cases.json]

Reads <wpt>/webvtt/parsing/file-parsing/ and writes a JSON array:
    [{"name", "vtt", "cues": [{"id", "start", "end"}], "valid"}]

Sources, per case (in this order of preference):
  1. support/<name>.test  -- the generator source: title line, HTML header lines, a blank
     line, JS assertions, a "===" line, then the VTT with backslash escapes. The VTT text is
     decoded exactly as the suite's generator does (UTF-8 bytes -> Python "unicode_escape").
  2. tests/<name>.html + tests/support/<name>.vtt -- a generated test whose .test source is
     absent: the JS block of the generated page and the VTT file's bytes (UTF-8).
  3. signature-invalid.html -- every support/*.vtt it lists must fail to load: valid=false, no cues.

A case is kept only when its expectations are certain from the assertions:
  * exactly one `assert_equals(cues.length, N)` with an integer literal N;
  * when N > 0, a startTime and endTime for every cue 0..N-1, given either by
    `assert_equals(cues[K].startTime, <number>)`, by an `Array.from(cues).forEach(function(cue, ...)`
    loop asserting `cue.startTime, <number>` for all cues, or by a literal array of
    `[start, end]` pairs iterated with `.forEach(function(pair, index)` whose length is N;
  * no other mention of startTime/endTime that these rules do not account for;
  * no conflicting duplicate assertion.
Cue ids are taken from `assert_equals(cues[K].id, '<literal>')` (or `var cue = cues[K]` then
`cue.id`); a cue whose id is not asserted gets "id": null (meaning: not checked).
Everything else is skipped with a reason (printed, and listed with --skipped).
"""
import argparse
import glob
import json
import os
import re
import sys

NUM = r"(-?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?)"
STR = r"""('(?:[^'\\]|\\.)*'|"(?:[^"\\]|\\.)*")"""


class Skip(Exception):
    pass


def js_string(lit):
    """Decode a JS single/double-quoted string literal."""
    body = lit[1:-1]
    out, i = [], 0
    simple = {"n": "\n", "r": "\r", "t": "\t", "b": "\b", "f": "\f", "v": "\v",
              "0": "\0", "\\": "\\", "'": "'", '"': '"'}
    while i < len(body):
        c = body[i]
        if c != "\\":
            out.append(c)
            i += 1
            continue
        n = body[i + 1]
        if n == "u":
            out.append(chr(int(body[i + 2:i + 6], 16)))
            i += 6
        elif n == "x":
            out.append(chr(int(body[i + 2:i + 4], 16)))
            i += 4
        elif n in simple:
            if n == "0" and i + 2 < len(body) and body[i + 2].isdigit():
                raise Skip("octal escape in JS string")
            out.append(simple[n])
            i += 2
        else:
            raise Skip("unknown JS escape \\" + n)
    return "".join(out)


def num(s):
    v = float(s)
    return int(v) if v.is_integer() and abs(v) < 2 ** 53 else v


def expectations(js):
    """Return (count, [{"id","start","end"}]) or raise Skip."""
    counts = re.findall(r"assert_equals\(\s*(?:track\.)?cues\.length\s*,\s*([^,)]+)", js)
    if len(counts) != 1:
        raise Skip("cue count not asserted exactly once")
    if not re.fullmatch(r"\d+", counts[0].strip()):
        raise Skip("cue count is not an integer literal")
    n = int(counts[0])
    start, end, ids = {}, {}, {}
    rest = [js]  # JS with every construct these rules read blanked out

    def put(table, k, v, what):
        if k in table and table[k] != v:
            raise Skip("conflicting %s assertions for cue %d" % (what, k))
        table[k] = v

    def consume(m):
        rest[0] = rest[0].replace(m.group(0), " " * len(m.group(0)), 1)

    # direct: assert_equals(cues[K].startTime, NUM)
    for m in re.finditer(r"assert_equals\(\s*cues\[(\d+)\]\.(startTime|endTime)\s*,\s*" + NUM + r"\s*[,)]", js):
        put(start if m.group(2) == "startTime" else end, int(m.group(1)), num(m.group(3)), m.group(2))
        consume(m)

    # Array.from(cues).forEach(function(cue, index) { ... cue.startTime, NUM ... });
    for m in re.finditer(r"Array\.from\(cues\)\.forEach\(function\(\s*(\w+)\s*,\s*\w+\s*\)\s*\{(.*?)\n\}\);", js, re.S):
        var, body = m.group(1), m.group(2)
        for a in re.finditer(r"assert_equals\(\s*" + var + r"\.(startTime|endTime)\s*,\s*" + NUM + r"\s*[,)]", body):
            for k in range(n):
                put(start if a.group(1) == "startTime" else end, k, num(a.group(2)), a.group(1))
            consume(a)

    # [[a, b], ...].forEach(function(pair, index) { var startTime = pair[0]; var endTime = pair[1];
    #   ... assert_equals(cues[index].startTime, startTime ...) ... });
    for m in re.finditer(r"\[((?:\s*\[\s*" + NUM + r"\s*,\s*" + NUM + r"\s*\]\s*,?)+)\s*\]\.forEach\(function\(\s*(\w+)\s*,\s*(\w+)\s*\)\s*\{(.*?)\n\}\);", js, re.S):
        pairs = re.findall(r"\[\s*" + NUM + r"\s*,\s*" + NUM + r"\s*\]", m.group(1))
        pv, iv, body = m.group(m.lastindex - 2), m.group(m.lastindex - 1), m.group(m.lastindex)
        binds = dict((name, int(idx)) for name, idx in re.findall(r"var\s+(\w+)\s*=\s*" + pv + r"\[([01])\];", body))
        timed = re.findall(r"assert_equals\(\s*cues\[" + iv + r"\]\.(startTime|endTime)\s*,\s*(\w+)\s*[,)]", body)
        if not timed:
            continue
        if len(pairs) != n:
            raise Skip("forEach timing table length differs from cue count")
        for field, name in timed:
            if name not in binds:
                raise Skip("forEach timing bound to an unknown variable")
            for k, p in enumerate(pairs):
                put(start if field == "startTime" else end, k, num(p[binds[name]]), field)
        body_rest = body
        for a in re.finditer(r"assert_equals\(\s*cues\[" + iv + r"\]\.(startTime|endTime)\s*,\s*(\w+)\s*[,)]", body):
            body_rest = body_rest.replace(a.group(0), "", 1)
        for name in binds:
            body_rest = re.sub(r"var\s+" + name + r"\s*=\s*" + pv + r"\[[01]\];", "", body_rest)
        if re.search(r"\b(startTime|endTime)\b", body_rest):
            raise Skip("timing assertions in a form these rules do not read")
        consume(m)

    if re.search(r"\b(startTime|endTime)\b", rest[0]):
        raise Skip("timing assertions in a form these rules do not read")

    # ids
    for k, lit in re.findall(r"assert_equals\(\s*cues\[(\d+)\]\.id\s*,\s*" + STR + r"\s*[,)]", js):
        put(ids, int(k), js_string(lit), "id")
    alias = None
    for line in js.splitlines():
        m = re.match(r"\s*var\s+cue\s*=\s*cues\[(\d+)\];", line)
        if m:
            alias = int(m.group(1))
            continue
        m = re.match(r"\s*assert_equals\(\s*cue\.id\s*,\s*" + STR + r"\s*[,)]", line)
        if m:
            if alias is None:
                raise Skip("cue.id asserted without a known cue")
            put(ids, alias, js_string(m.group(1)), "id")
    if any(k >= n for k in list(start) + list(end) + list(ids)):
        raise Skip("assertion on a cue index beyond the cue count")

    if n > 0:
        if not start and not end:
            raise Skip("cue times not asserted")
        missing = [k for k in range(n) if k not in start or k not in end]
        if missing:
            raise Skip("cue times not asserted for cues %s" % missing)
    cues = [{"id": ids.get(k), "start": start[k], "end": end[k]} for k in range(n)]
    return n, cues


def from_test_file(path):
    src = open(path, encoding="utf-8", newline="").read()
    header, body = src.split("\n\n", 1)
    js, vtt_escaped = body.split("===\n", 1)
    if any(ord(c) > 127 for c in vtt_escaped):
        raise Skip("raw non-ASCII in .test VTT part (generator output would be ambiguous)")
    vtt = bytes(vtt_escaped, "utf-8").decode("unicode_escape")
    return header.split("\n", 1)[0], js, vtt


GENERATED_JS = re.compile(r"var cues = video\.textTracks\[0\]\.cues;\n    \{\n(.*?)\n    \}\n    this\.done\(\);", re.S)


def from_generated_html(path):
    html = open(path, encoding="utf-8", newline="").read()
    m = GENERATED_JS.search(html)
    src = re.search(r"track\.src = '([^']+)';", html)
    if not m or not src:
        raise Skip("hand-written test page, not in generated form")
    vtt_path = os.path.join(os.path.dirname(path), src.group(1))
    if not os.path.exists(vtt_path):
        raise Skip("VTT input %s not present" % src.group(1))
    try:
        vtt = open(vtt_path, "rb").read().decode("utf-8")
    except UnicodeDecodeError:
        raise Skip("VTT input is not UTF-8")
    title = re.search(r"<title>WebVTT parser test: (.*?)</title>", html)
    return (title.group(1) if title else ""), m.group(1), vtt


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("wpt_root")
    ap.add_argument("-o", "--output", default="cases.json")
    ap.add_argument("--skipped", help="also write skipped names and reasons to this JSON file")
    a = ap.parse_args()
    base = os.path.join(a.wpt_root, "webvtt", "parsing", "file-parsing")
    if not os.path.isdir(base):
        sys.exit("no webvtt/parsing/file-parsing under " + a.wpt_root)

    cases, skipped, seen = [], [], set()

    def attempt(name, fn):
        seen.add(name)
        try:
            title, js, vtt = fn()
            _, cues = expectations(js)
            cases.append({"name": name, "vtt": vtt, "cues": cues, "valid": True})
        except Skip as e:
            skipped.append({"name": name, "reason": str(e)})

    for p in sorted(glob.glob(os.path.join(base, "support", "*.test"))):
        name = os.path.splitext(os.path.basename(p))[0]
        attempt(name, lambda p=p: from_test_file(p))
    for p in sorted(glob.glob(os.path.join(base, "tests", "*.html"))):
        name = os.path.splitext(os.path.basename(p))[0]
        if name not in seen:
            attempt(name, lambda p=p: from_generated_html(p))

    inv = os.path.join(base, "signature-invalid.html")
    if os.path.exists(inv):
        html = open(inv, encoding="utf-8").read()
        prefix = "support/" if "'support/' + test_data[1]" in html else ""
        for label, f in re.findall(r"\[\s*'([^']*)'\s*,\s*'([^']+\.vtt)'\s*\]", html):
            rel = prefix + f
            name = os.path.splitext(os.path.basename(f))[0]
            p = os.path.join(base, rel)
            if not os.path.exists(p):
                skipped.append({"name": name, "reason": "invalid-signature input %s not present" % rel})
                continue
            try:
                vtt = open(p, "rb").read().decode("utf-8")
            except UnicodeDecodeError:
                skipped.append({"name": name, "reason": "input is not UTF-8"})
                continue
            cases.append({"name": name, "vtt": vtt, "cues": [], "valid": False})

    cases.sort(key=lambda c: c["name"])
    skipped.sort(key=lambda s: s["name"])
    with open(a.output, "w", encoding="ascii") as f:
        json.dump(cases, f, indent=1, ensure_ascii=True)
        f.write("\n")
    if a.skipped:
        with open(a.skipped, "w") as f:
            json.dump(skipped, f, indent=1)
            f.write("\n")
    print("included %d, skipped %d" % (len(cases), len(skipped)), file=sys.stderr)
    for s in skipped:
        print("  skipped %-28s %s" % (s["name"], s["reason"]), file=sys.stderr)


if __name__ == "__main__":
    main()
