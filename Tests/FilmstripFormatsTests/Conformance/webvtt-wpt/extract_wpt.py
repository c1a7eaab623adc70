#!/usr/bin/env python3
"""Extract WebVTT file-parsing conformance cases from a web-platform-tests checkout.

Usage:
    python3 extract_wpt.py /path/to/wpt [-o cases.json] [--skipped skipped.json] [--table]

Reads <wpt>/webvtt/parsing/file-parsing/ and writes a JSON array, one entry per case:
    {"name", "vtt", "valid", "cues": [{"id", "start", "end"}], "count_only"}

  vtt         the exact text the browser loads (file bytes decoded as UTF-8, nothing stripped).
  valid       false: the file must fail to load (bad signature); cues is then [].
  cues        one entry per cue the browser must produce, in order.
    id        the asserted cue identifier ("" when the suite asserts an empty id), or null when the
              suite asserts nothing about that cue's id.
    start/end seconds, or null when the suite asserts nothing about that cue's times.
  count_only  true when the case has cues but the suite asserts no start/end time for any of them
              (only the count, and maybe ids/settings/regions/text).

Sources, per case (in this order of preference):
  1. support/<name>.test -- the generator source: title line, HTML header lines, a blank line,
     JS assertions, a "===" line, then the VTT with backslash escapes. The VTT is decoded exactly
     as tools/build.py does (UTF-8 bytes -> Python "unicode_escape") and, when the generated
     tests/support/<name>.vtt is present, compared with it byte for byte (a mismatch is an error).
  2. tests/<name>.html without a .test source -- a generated page (its JS block) or a hand-written
     one (its track src and a single cues.length assertion), with the VTT file it loads, read as
     raw bytes (UTF-8).
  3. signature-invalid.html -- every support/*.vtt it lists must fail to load: valid=false, no cues.
     The files are read as raw bytes (control characters, NUL, BOMs and non-ASCII are kept).

What is read from the JS, and only this (anything else about cue ids/times skips the case):
  * exactly one cues.length assertion with an integer literal (`cues.length` or `track.cues.length`);
  * `assert_equals(cues[K].startTime|endTime|id, <literal>)`;
  * `var cue = cues[K];` followed by `assert_equals(cue.id, <literal>)`;
  * `for (var i = 0; i < cues.length; i++) { ... assert_equals(cues[i].id, <literal>) ... }`
    (the same literal for every cue);
  * `Array.from(cues).forEach(function(cue, index) { ... assert_equals(cue.startTime, <number>) ...`
    (the same literal for every cue);
  * a literal table of [start, end] pairs iterated with `.forEach(function(pair, index)`, whose
    length equals the cue count, asserting `cues[index].startTime/endTime`.
Settings, regions, text and style-sheet assertions are not read (they do not change which cues
exist). A page with no cues.length assertion at all is skipped.
"""
import argparse
import glob
import hashlib
import json
import os
import re
import sys

NUM = r"(-?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?)"
STR = r"""('(?:[^'\\\n]|\\.)*'|"(?:[^"\\\n]|\\.)*")"""


class Skip(Exception):
    pass


def git_blob_id(data):
    """The id git gives these bytes (`git hash-object`), to name the exact file version read."""
    return hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()


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
    """Return the list of cues [{"id","start","end"}] the JS asserts, or raise Skip."""
    counts = re.findall(r"assert_equals\(\s*(?:track\.)?cues\.length\s*,\s*([^,)]+)", js)
    if not counts:
        raise Skip("no cue count asserted")
    if len(counts) != 1:
        raise Skip("cue count asserted more than once")
    if not re.fullmatch(r"\d+", counts[0].strip()):
        raise Skip("cue count is not an integer literal")
    n = int(counts[0])
    start, end, ids = {}, {}, {}
    rest = [js]  # the JS with every construct read here blanked out

    def put(table, k, v, what):
        if k in table and table[k] != v:
            raise Skip("conflicting %s assertions for cue %d" % (what, k))
        table[k] = v

    def consume(text):
        rest[0] = rest[0].replace(text, " " * len(text), 1)

    def field_table(field):
        return {"startTime": start, "endTime": end, "id": ids}[field]

    # direct: assert_equals(cues[K].startTime|endTime, NUM) / assert_equals(cues[K].id, STR)
    for m in re.finditer(r"assert_equals\(\s*cues\[(\d+)\]\.(startTime|endTime)\s*,\s*" + NUM + r"\s*[,)]", js):
        put(field_table(m.group(2)), int(m.group(1)), num(m.group(3)), m.group(2))
        consume(m.group(0))
    for m in re.finditer(r"assert_equals\(\s*cues\[(\d+)\]\.id\s*,\s*" + STR + r"\s*[,)]", js):
        put(ids, int(m.group(1)), js_string(m.group(2)), "id")
        consume(m.group(0))

    # var cue = cues[K]; ... assert_equals(cue.id, STR)
    alias = None
    for line in js.splitlines():
        m = re.match(r"\s*var\s+cue\s*=\s*cues\[(\d+)\];", line)
        if m:
            alias = int(m.group(1))
            continue
        m = re.match(r"\s*(assert_equals\(\s*cue\.(id|startTime|endTime)\s*,\s*(" + STR[1:-1] + "|" + NUM[1:-1] + r")\s*[,)])", line)
        if m and alias is not None:
            field, lit = m.group(2), m.group(3)
            if field == "id":
                if lit[0] not in "'\"":
                    raise Skip("cue.id compared with a non-string")
                put(ids, alias, js_string(lit), "id")
            else:
                put(field_table(field), alias, num(lit), field)
            consume(m.group(1))

    # for (var i = 0; i < cues.length; i++) { ... assert_equals(cues[i].id, STR ...) ... }
    for m in re.finditer(r"for\s*\(\s*var\s+(\w+)\s*=\s*0\s*;\s*\1\s*<\s*cues\.length\s*;\s*\1\+\+\s*\)\s*\{(.*?)\n\}", js, re.S):
        var, body = m.group(1), m.group(2)
        for a in re.finditer(r"assert_equals\(\s*cues\[" + var + r"\]\.id\s*,\s*" + STR + r"\s*[,)]", body):
            for k in range(n):
                put(ids, k, js_string(a.group(1)), "id")
            consume(a.group(0))
        for a in re.finditer(r"assert_equals\(\s*cues\[" + var + r"\]\.(startTime|endTime)\s*,\s*" + NUM + r"\s*[,)]", body):
            for k in range(n):
                put(field_table(a.group(1)), k, num(a.group(2)), a.group(1))
            consume(a.group(0))

    # Array.from(cues).forEach(function(cue, index) { ... cue.startTime, NUM ... });
    for m in re.finditer(r"Array\.from\(cues\)\.forEach\(function\(\s*(\w+)\s*,\s*\w+\s*\)\s*\{(.*?)\n\}\);", js, re.S):
        var, body = m.group(1), m.group(2)
        for a in re.finditer(r"assert_equals\(\s*" + var + r"\.(startTime|endTime)\s*,\s*" + NUM + r"\s*[,)]", body):
            for k in range(n):
                put(field_table(a.group(1)), k, num(a.group(2)), a.group(1))
            consume(a.group(0))
        for a in re.finditer(r"assert_equals\(\s*" + var + r"\.id\s*,\s*" + STR + r"\s*[,)]", body):
            for k in range(n):
                put(ids, k, js_string(a.group(1)), "id")
            consume(a.group(0))

    # [[a, b], ...].forEach(function(pair, index) { var startTime = pair[0]; var endTime = pair[1];
    #   ... assert_equals(cues[index].startTime, startTime ...) ... });
    pair_re = r"\[\s*" + NUM + r"\s*,\s*" + NUM + r"\s*\]"
    for m in re.finditer(r"\[((?:\s*" + pair_re + r"\s*,?)+)\s*\]\.forEach\(function\(\s*(\w+)\s*,\s*(\w+)\s*\)\s*\{(.*?)\n\}\);", js, re.S):
        pairs = re.findall(pair_re, m.group(1))
        pv, iv, body = m.group(m.lastindex - 2), m.group(m.lastindex - 1), m.group(m.lastindex)
        binds = dict((name, int(idx)) for name, idx in re.findall(r"var\s+(\w+)\s*=\s*" + pv + r"\[([01])\];", body))
        timed = list(re.finditer(r"assert_equals\(\s*cues\[" + iv + r"\]\.(startTime|endTime)\s*,\s*(\w+)\s*[,)]", body))
        if not timed:
            continue
        if len(pairs) != n:
            raise Skip("forEach timing table length differs from cue count")
        for a in timed:
            field, name = a.group(1), a.group(2)
            if name not in binds:
                raise Skip("forEach timing bound to an unknown variable")
            for k, p in enumerate(pairs):
                put(field_table(field), k, num(p[binds[name]]), field)
            consume(a.group(0))
        for name in binds:
            for b in re.finditer(r"var\s+" + name + r"\s*=\s*" + pv + r"\[[01]\];", body):
                consume(b.group(0))

    # Nothing about cue times or cue ids may be left unread.
    if re.search(r"\b(startTime|endTime)\b", rest[0]):
        raise Skip("timing assertions in a form these rules do not read")
    if re.search(r"\bcues\[[^\]]*\]\.id\b|\bcue\.id\b", rest[0]):
        raise Skip("cue id assertions in a form these rules do not read")
    if any(k >= n for k in list(start) + list(end) + list(ids)):
        raise Skip("assertion on a cue index beyond the cue count")
    return [{"id": ids.get(k), "start": start.get(k), "end": end.get(k)} for k in range(n)]


def from_test_file(path, base):
    raw = open(path, "rb").read()
    # tools/build.py opens the file in text mode: universal newlines, UTF-8.
    src = raw.decode("utf-8").replace("\r\n", "\n").replace("\r", "\n")
    parts = src.split("\n\n", 1)
    if len(parts) != 2:
        raise Skip("no blank line after the .test header")
    body = parts[1].split("\n===\n", 1)
    if len(body) != 2:
        raise Skip("no === line in the .test file")
    js, vtt_escaped = body
    vtt = bytes(vtt_escaped, "utf-8").decode("unicode_escape")
    name = os.path.splitext(os.path.basename(path))[0]
    sources = [(os.path.relpath(path, base), git_blob_id(raw))]
    generated = os.path.join(base, "tests", "support", name + ".vtt")
    if os.path.exists(generated):
        gen = open(generated, "rb").read()
        if gen != vtt.encode("utf-8"):
            sys.exit("%s: decoded VTT differs from the generated %s" % (name, generated))
        sources.append((os.path.relpath(generated, base), git_blob_id(gen)))
    return js, vtt, sources


GENERATED_JS = re.compile(r"var cues = video\.textTracks\[0\]\.cues;\n    \{\n(.*?)\n    \}\n    this\.done\(\);", re.S)


def from_html(path, base):
    raw = open(path, "rb").read()
    html = raw.decode("utf-8")
    m = GENERATED_JS.search(html)
    if m:
        js = m.group(1)
    else:
        scripts = re.findall(r"<script>(.*?)</script>", html, re.S)
        if len(scripts) != 1:
            raise Skip("hand-written page with %d inline scripts" % len(scripts))
        js = scripts[0]
    srcs = re.findall(r"\b\w*[tT]rack\.src\s*=\s*'([^']+)';", html)
    if len(srcs) != 1:
        raise Skip("not exactly one track src")
    vtt_path = os.path.join(os.path.dirname(path), srcs[0])
    if not os.path.exists(vtt_path):
        raise Skip("VTT input %s not present" % srcs[0])
    data = open(vtt_path, "rb").read()
    try:
        vtt = data.decode("utf-8")
    except UnicodeDecodeError:
        raise Skip("VTT input is not UTF-8")
    sources = [(os.path.relpath(path, base), git_blob_id(raw)),
               (os.path.relpath(vtt_path, base), git_blob_id(data))]
    return js, vtt, sources


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("wpt_root")
    ap.add_argument("-o", "--output", default="cases.json")
    ap.add_argument("--skipped", help="also write skipped names and reasons to this JSON file")
    ap.add_argument("--table", action="store_true", help="print a Markdown table of cases and source files")
    a = ap.parse_args()
    base = os.path.join(a.wpt_root, "webvtt", "parsing", "file-parsing")
    if not os.path.isdir(base):
        sys.exit("no webvtt/parsing/file-parsing under " + a.wpt_root)

    cases, skipped, seen, sources = [], [], set(), {}

    def attempt(name, fn):
        seen.add(name)
        try:
            js, vtt, srcs = fn()
            cues = expectations(js)
        except Skip as e:
            skipped.append({"name": name, "reason": str(e)})
            return
        timed = any(c["start"] is not None or c["end"] is not None for c in cues)
        cases.append({"name": name, "vtt": vtt, "valid": True, "cues": cues,
                      "count_only": bool(cues) and not timed})
        sources[name] = srcs

    for p in sorted(glob.glob(os.path.join(base, "support", "*.test"))):
        name = os.path.splitext(os.path.basename(p))[0]
        attempt(name, lambda p=p: from_test_file(p, base))
    for p in sorted(glob.glob(os.path.join(base, "tests", "*.html"))):
        name = os.path.splitext(os.path.basename(p))[0]
        if name not in seen:
            attempt(name, lambda p=p: from_html(p, base))

    inv = os.path.join(base, "signature-invalid.html")
    if os.path.exists(inv):
        inv_raw = open(inv, "rb").read()
        html = inv_raw.decode("utf-8")
        prefix = "support/" if "'support/' + test_data[1]" in html else ""
        for label, f in re.findall(r"\[\s*'([^']*)'\s*,\s*'([^']+\.vtt)'\s*\]", html):
            rel = prefix + f
            name = os.path.splitext(os.path.basename(f))[0]
            p = os.path.join(base, rel)
            if not os.path.exists(p):
                skipped.append({"name": name, "reason": "invalid-signature input %s not present" % rel})
                continue
            data = open(p, "rb").read()
            try:
                vtt = data.decode("utf-8")
            except UnicodeDecodeError:
                skipped.append({"name": name, "reason": "input is not UTF-8"})
                continue
            cases.append({"name": name, "vtt": vtt, "valid": False, "cues": [], "count_only": False})
            sources[name] = [("signature-invalid.html", git_blob_id(inv_raw)), (rel, git_blob_id(data))]

    cases.sort(key=lambda c: c["name"])
    skipped.sort(key=lambda s: s["name"])
    with open(a.output, "w", encoding="ascii") as f:
        json.dump(cases, f, indent=1, ensure_ascii=True)
        f.write("\n")
    if a.skipped:
        with open(a.skipped, "w") as f:
            json.dump(skipped, f, indent=1)
            f.write("\n")
    if a.table:
        print("| case | valid | cues | times | ids | source files (git blob id) |")
        print("| --- | --- | --- | --- | --- | --- |")
        for c in cases:
            cues = c["cues"]
            if not cues:
                times = "-"
            elif c["count_only"]:
                times = "count only"
            else:
                times = "all" if all(x["start"] is not None and x["end"] is not None for x in cues) else "some"
            idn = sum(1 for x in cues if x["id"] is not None)
            ids = "-" if not cues else ("all" if idn == len(cues) else ("%d of %d" % (idn, len(cues)) if idn else "none"))
            files = "; ".join("`%s` (`%s`)" % (p, h[:10]) for p, h in sources[c["name"]])
            print("| `%s` | %s | %d | %s | %s | %s |" % (c["name"], "yes" if c["valid"] else "no", len(cues), times, ids, files))
    print("included %d, skipped %d" % (len(cases), len(skipped)), file=sys.stderr)
    for s in skipped:
        print("  skipped %-28s %s" % (s["name"], s["reason"]), file=sys.stderr)


if __name__ == "__main__":
    main()
