#!/usr/bin/env python3
"""A small reference of the W3C WebVTT parser algorithm, limited to what decides cues.

https://w3c.github.io/webvtt/#file-parsing -- "WebVTT parser algorithm", "collect a WebVTT block",
"collect WebVTT cue timings and settings", "collect a WebVTT timestamp". Python 3, standard library.

It answers, for a file's bytes: is the signature accepted, and which cues come out (id, start, end,
text). Cue settings, regions and style sheets are not evaluated (they never change which cues exist
or their times): a block is recognised as STYLE/REGION exactly as the spec says, and then dropped.

It is used to check third-party expectations (mozilla/vtt.js) against the spec, and was itself checked
against every web-platform-tests case in ../webvtt-wpt/cases.json (cue count, ids, times).

Usage:
    python3 spec_reference.py FILE.vtt ...        # prints JSON per file
    python3 spec_reference.py --check-cases cases.json
    python3 spec_reference.py --annotate-drops cases.json ...   # adds each case's `drops`
"""
import json
import re
import sys

ASCII_WS = "\t\n\f\r "
DIGITS = "0123456789"


def decode(data):
    """UTF-8 decode as the HTML track loader does: one leading BOM is dropped, bad bytes -> U+FFFD."""
    if data.startswith(b"\xef\xbb\xbf"):
        data = data[3:]
    return data.decode("utf-8", errors="replace")


def collect_timestamp(s, pos):
    """Returns (seconds, pos) or (None, pos)."""
    units = "minutes"
    if pos >= len(s) or s[pos] not in DIGITS:
        return None, pos
    start = pos
    while pos < len(s) and s[pos] in DIGITS:
        pos += 1
    digits = s[start:pos]
    v1 = int(digits)
    if len(digits) != 2 or v1 > 59:
        units = "hours"
    if pos >= len(s) or s[pos] != ":":
        return None, pos
    pos += 1
    start = pos
    while pos < len(s) and s[pos] in DIGITS:
        pos += 1
    if pos - start != 2:
        return None, pos
    v2 = int(s[start:pos])
    if units == "hours" or (pos < len(s) and s[pos] == ":"):
        if pos >= len(s) or s[pos] != ":":
            return None, pos
        pos += 1
        start = pos
        while pos < len(s) and s[pos] in DIGITS:
            pos += 1
        if pos - start != 2:
            return None, pos
        v3 = int(s[start:pos])
    else:
        v3, v2, v1 = v2, v1, 0
    if pos >= len(s) or s[pos] != ".":
        return None, pos
    pos += 1
    start = pos
    while pos < len(s) and s[pos] in DIGITS:
        pos += 1
    if pos - start != 3:
        return None, pos
    v4 = int(s[start:pos])
    if v2 > 59 or v3 > 59:
        return None, pos
    # Same arithmetic as the spec (and as JS): hours*3600 + minutes*60 + seconds + ms/1000.
    return v1 * 60 * 60 + v2 * 60 + v3 + v4 / 1000, pos


def collect_timings(line):
    """Returns (start, end) or None. Settings (the remainder) are ignored."""
    pos = 0
    while pos < len(line) and line[pos] in ASCII_WS:
        pos += 1
    start, pos = collect_timestamp(line, pos)
    if start is None:
        return None
    while pos < len(line) and line[pos] in ASCII_WS:
        pos += 1
    for ch in "-->":
        if pos >= len(line) or line[pos] != ch:
            return None
        pos += 1
    while pos < len(line) and line[pos] in ASCII_WS:
        pos += 1
    end, pos = collect_timestamp(line, pos)
    if end is None:
        return None
    return start, end


class Parser:
    def __init__(self, text):
        self.s = text
        self.pos = 0
        self.seen_cue = False
        # Blocks a browser ignores that are not comments: a timing line that fails (the cue is dropped), a block
        # that is neither cue, comment, nor a STYLE/REGION block before the first cue.
        self.drops = 0

    def collect_line(self):
        start = self.pos
        while self.pos < len(self.s) and self.s[self.pos] != "\n":
            self.pos += 1
        return self.s[start:self.pos]

    def skip_newlines(self):
        while self.pos < len(self.s) and self.s[self.pos] == "\n":
            self.pos += 1

    def collect_block(self, in_header):
        line_count = 0
        previous = self.pos
        buffer = ""
        seen_eof = False
        seen_arrow = False
        cue = None
        other = None  # "style" or "region"
        while True:
            line = self.collect_line()
            line_count += 1
            if self.pos >= len(self.s):
                seen_eof = True
            else:
                self.pos += 1
            if "-->" in line:
                if not in_header and (line_count == 1 or (line_count == 2 and not seen_arrow)):
                    seen_arrow = True
                    previous = self.pos
                    timings = collect_timings(line)
                    if timings is None:
                        cue = None
                    else:
                        cue = {"id": buffer, "start": timings[0], "end": timings[1]}
                        buffer = ""
                        self.seen_cue = True
                else:
                    self.pos = previous
                    break
            elif line == "":
                break
            else:
                if not in_header and line_count == 2:
                    if not self.seen_cue and re.fullmatch(r"STYLE[ \t]*", buffer):
                        other, buffer = "style", ""
                    elif not self.seen_cue and re.fullmatch(r"REGION[ \t]*", buffer):
                        other, buffer = "region", ""
                if buffer != "":
                    buffer += "\n"
                buffer += line
                previous = self.pos
            if seen_eof:
                break
        if cue is not None:
            cue["text"] = buffer
            return cue
        if other is None and not in_header and not (seen_arrow is False and re.match(r"NOTE($|[ \t\n])", buffer)):
            self.drops += 1
        return other

    def parse(self):
        """Returns None when the file is rejected (bad signature), else the list of cues."""
        s = self.s.replace("\0", "\ufffd").replace("\r\n", "\n").replace("\r", "\n")
        self.s, self.pos = s, 0
        if len(s) < 6:
            return None
        if len(s) == 6 and s != "WEBVTT":
            return None
        if len(s) > 6 and not (s.startswith("WEBVTT") and s[6] in " \t\n"):
            return None
        self.collect_line()
        if self.pos >= len(s):
            return []
        self.pos += 1  # the LF
        if self.pos >= len(s):
            return []
        if s[self.pos] != "\n":
            self.collect_block(in_header=True)
        else:
            self.pos += 1
        self.skip_newlines()
        cues = []
        while self.pos < len(s):
            block = self.collect_block(in_header=False)
            if isinstance(block, dict):
                cues.append(block)
            self.skip_newlines()
        return cues


def parse_bytes(data):
    return Parser(decode(data)).parse()


def drops_of(data):
    """How many blocks a browser ignores (see Parser.drops); None for a rejected file."""
    parser = Parser(decode(data))
    return None if parser.parse() is None else parser.drops


def annotate(path):
    """Adds `drops` (see Parser.drops) to every case of a cases.json, in place."""
    cases = json.load(open(path, encoding="utf-8"))
    for c in cases:
        c["drops"] = drops_of(c["vtt"].encode("utf-8")) or 0
    with open(path, "w", encoding="utf-8") as f:
        json.dump(cases, f, indent=1, ensure_ascii=True)
        f.write("\n")


def check_cases(path):
    """Compare this reference with a cases.json (vtt as text, encoded back to UTF-8 bytes)."""
    cases = json.load(open(path, encoding="utf-8"))
    bad = 0
    for c in cases:
        got = parse_bytes(c["vtt"].encode("utf-8"))
        problems = []
        if not c["valid"]:
            if got is not None:
                problems.append("accepted, expected rejection")
        elif got is None:
            problems.append("rejected, expected acceptance")
        elif len(got) != len(c["cues"]):
            problems.append("%d cues, expected %d" % (len(got), len(c["cues"])))
        else:
            for k, (g, e) in enumerate(zip(got, c["cues"])):
                for f in ("id", "start", "end"):
                    if e[f] is not None and g[f] != e[f]:
                        problems.append("cue %d %s %r, expected %r" % (k, f, g[f], e[f]))
        if problems:
            bad += 1
            print("%s: %s" % (c["name"], "; ".join(problems)))
    print("%d of %d cases agree" % (len(cases) - bad, len(cases)))
    return bad == 0


def main(argv):
    if len(argv) == 3 and argv[1] == "--check-cases":
        return 0 if check_cases(argv[2]) else 1
    if len(argv) >= 3 and argv[1] == "--annotate-drops":
        for path in argv[2:]:
            annotate(path)
        return 0
    for p in argv[1:]:
        cues = parse_bytes(open(p, "rb").read())
        print(json.dumps({"file": p, "valid": cues is not None, "cues": cues or []}, ensure_ascii=True))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
