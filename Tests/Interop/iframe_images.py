"""A checker of HLS I-frame image sequences, written from what Apple's HLS Authoring Specification (appendix "I-frame
image sequences") and RFC 8216 ask of them, apart from Filmstrip's own reader: the I-frame playlist, its
initialisation section, each entry's fragment and the JPEG inside it, and (given a master) the master's line.

    problems, images = check("out/iframe-images.m3u8")   # problems == [] when the sequence is valid

`images` lists each entry's start and duration in seconds and its JPEG bytes, for a caller that checks pictures.
"""
import os
import re
import struct
import urllib.parse


class Boxes:
    """The ISO BMFF boxes of `data[start:end]` as (type, payload start, payload end, box start)."""

    def __init__(self, data, start=0, end=None):
        self.items = []
        end = len(data) if end is None else end
        position = start
        while position < end:
            if end - position < 8:
                raise ValueError(f"a box header at {position} is cut short")
            size, kind = struct.unpack(">I4s", data[position:position + 8])
            header = 8
            if size == 1:
                size = struct.unpack(">Q", data[position + 8:position + 16])[0]
                header = 16
            elif size == 0:
                size = end - position
            if size < header or position + size > end:
                raise ValueError(f"the {kind!r} box at {position} runs past its parent")
            self.items.append((kind.decode("latin-1"), position + header, position + size, position))
            position += size

    def all(self, kind):
        return [item for item in self.items if item[0] == kind]

    def one(self, kind, problems, where):
        found = self.all(kind)
        if len(found) != 1:
            problems.append(f"{where}: {len(found)} {kind} boxes, expected one")
            return None
        return found[0]


def attributes(text):
    """The attribute list of a tag: NAME=value pairs, quoted strings unquoted."""
    out = {}
    for name, quoted, plain in re.findall(r'([A-Z0-9-]+)=(?:"([^"]*)"|([^,]*))', text):
        out[name] = quoted if quoted else plain
    return out


def jpeg_size(data):
    """(width, height, baseline) from a JPEG's first SOF marker, or None."""
    position = 2
    while position + 4 <= len(data):
        if data[position] != 0xFF:
            return None
        marker = data[position + 1]
        length = struct.unpack(">H", data[position + 2:position + 4])[0]
        if marker in (0xC0, 0xC1, 0xC2):
            height, width = struct.unpack(">HH", data[position + 5:position + 9])
            return width, height, marker == 0xC0
        position += 2 + length
    return None


def check_initialization(data, resolution, problems):
    """The init section: ftyp, one video track of mjpg samples at `resolution`, mvex. Returns (track, timescale)."""
    top = Boxes(data)
    if not top.items or top.items[0][0] != "ftyp":
        problems.append("init: the first box is not ftyp")
    moov = top.one("moov", problems, "init")
    if moov is None:
        return None, None
    inside = Boxes(data, moov[1], moov[2])
    traks = inside.all("trak")
    if len(traks) != 1:
        problems.append(f"init: {len(traks)} tracks, expected one")
        return None, None
    if not inside.all("mvex") or not Boxes(data, inside.all("mvex")[0][1], inside.all("mvex")[0][2]).all("trex"):
        problems.append("init: no mvex/trex (a fragmented file needs one)")
    trak = Boxes(data, traks[0][1], traks[0][2])
    tkhd = trak.one("tkhd", problems, "init trak")
    track = None
    if tkhd:
        version = data[tkhd[1]]
        track = struct.unpack(">I", data[tkhd[1] + (20 if version == 1 else 12):][:4])[0]
        width, height = struct.unpack(">II", data[tkhd[2] - 8:tkhd[2]])
        if resolution and (width >> 16, height >> 16) != resolution:
            problems.append(f"init: tkhd says {width >> 16}x{height >> 16}, RESOLUTION {resolution}")
    mdia = trak.one("mdia", problems, "init trak")
    if mdia is None:
        return track, None
    media = Boxes(data, mdia[1], mdia[2])
    timescale = None
    mdhd = media.one("mdhd", problems, "init mdia")
    if mdhd:
        version = data[mdhd[1]]
        timescale = struct.unpack(">I", data[mdhd[1] + (20 if version == 1 else 12):][:4])[0]
        if not timescale:
            problems.append("init: the media timescale is 0")
    hdlr = media.one("hdlr", problems, "init mdia")
    if hdlr and data[hdlr[1] + 8:hdlr[1] + 12] != b"vide":
        problems.append(f"init: handler {data[hdlr[1] + 8:hdlr[1] + 12]!r}, expected vide")
    minf = media.one("minf", problems, "init mdia")
    stbl = Boxes(data, minf[1], minf[2]).one("stbl", problems, "init minf") if minf else None
    stsd = Boxes(data, stbl[1], stbl[2]).one("stsd", problems, "init stbl") if stbl else None
    if stsd:
        count = struct.unpack(">I", data[stsd[1] + 4:stsd[1] + 8])[0]
        entries = Boxes(data, stsd[1] + 8, stsd[2])
        if count != 1 or len(entries.items) != 1:
            problems.append(f"init: {count} sample entries, expected one")
        elif entries.items[0][0] != "mjpg":
            problems.append(f"init: sample entry {entries.items[0][0]}, expected mjpg")
        else:
            entry = entries.items[0]
            width, height = struct.unpack(">HH", data[entry[1] + 24:entry[1] + 28])
            if resolution and (width, height) != resolution:
                problems.append(f"init: the mjpg entry says {width}x{height}, RESOLUTION {resolution}")
    return track, timescale


def check_fragment(data, offset, length, index, track, timescale, start, duration, sequence, problems):
    """One entry's bytes: moof (mfhd, one traf: tfhd, tfdt, a one-sample sync trun) then mdat holding the JPEG.
    Returns the JPEG bytes and the mfhd sequence number."""
    where = f"entry {index + 1}"
    try:
        top = Boxes(data, offset, offset + length)
    except ValueError as error:
        problems.append(f"{where}: {error}")
        return None, sequence
    if [item[0] for item in top.items] != ["moof", "mdat"]:
        problems.append(f"{where}: boxes {[item[0] for item in top.items]}, expected exactly moof, mdat")
        return None, sequence
    moof, mdat = top.items
    inside = Boxes(data, moof[1], moof[2])
    mfhd = inside.one("mfhd", problems, where)
    if mfhd:
        number = struct.unpack(">I", data[mfhd[1] + 4:mfhd[1] + 8])[0]
        if number <= sequence:
            problems.append(f"{where}: mfhd sequence {number} after {sequence}")
        sequence = number
    traf = inside.one("traf", problems, where)
    if traf is None:
        return None, sequence
    parts = Boxes(data, traf[1], traf[2])
    tfhd, tfdt, trun = (parts.one(kind, problems, where) for kind in ("tfhd", "tfdt", "trun"))
    if not (tfhd and tfdt and trun):
        return None, sequence
    flags = struct.unpack(">I", data[tfhd[1]:tfhd[1] + 4])[0] & 0xFFFFFF
    if track is not None and struct.unpack(">I", data[tfhd[1] + 4:tfhd[1] + 8])[0] != track:
        problems.append(f"{where}: tfhd names another track")
    base = moof[3]
    if flags & 0x01:
        base = struct.unpack(">Q", data[tfhd[1] + 8:tfhd[1] + 16])[0]
    elif not flags & 0x020000:
        problems.append(f"{where}: neither a base data offset nor default-base-is-moof (the base would be ambiguous)")
    version = data[tfdt[1]]
    decode_time = struct.unpack(">Q" if version == 1 else ">I",
                                data[tfdt[1] + 4:tfdt[1] + (12 if version == 1 else 8)])[0]
    if timescale and abs(decode_time - round(start * timescale)) > max(1, timescale // 1000):
        problems.append(f"{where}: tfdt {decode_time / timescale:.3f} s, the playlist's time {start:.3f} s")
    trun_flags = struct.unpack(">I", data[trun[1]:trun[1] + 4])[0] & 0xFFFFFF
    count = struct.unpack(">I", data[trun[1] + 4:trun[1] + 8])[0]
    if count != 1:
        problems.append(f"{where}: trun has {count} samples, expected one image")
        return None, sequence
    position = trun[1] + 8
    data_offset = None
    if trun_flags & 0x001:
        data_offset = struct.unpack(">i", data[position:position + 4])[0]
        position += 4
    else:
        problems.append(f"{where}: trun has no data offset")
    sample_duration = sample_size = sample_flags = None
    if trun_flags & 0x004:
        sample_flags = struct.unpack(">I", data[position:position + 4])[0]  # first-sample-flags
        position += 4
    if trun_flags & 0x100:
        sample_duration = struct.unpack(">I", data[position:position + 4])[0]
        position += 4
    if trun_flags & 0x200:
        sample_size = struct.unpack(">I", data[position:position + 4])[0]
        position += 4
    if trun_flags & 0x400:
        sample_flags = struct.unpack(">I", data[position:position + 4])[0]
    if sample_size is None:
        problems.append(f"{where}: the sample's size is not in the trun")
    if sample_flags is not None and sample_flags & 0x10000:
        problems.append(f"{where}: the sample is marked non-sync")
    if sample_duration is not None and timescale and abs(sample_duration - round(duration * timescale)) > 1:
        problems.append(f"{where}: sample duration {sample_duration / timescale:.3f} s, EXTINF {duration:.3f} s")
    payload = (mdat[1], mdat[2])
    if data_offset is not None and base + data_offset != payload[0]:
        problems.append(f"{where}: the trun's data offset points at {base + data_offset}, the mdat's payload "
                        f"starts at {payload[0]}")
    if sample_size is not None and sample_size != payload[1] - payload[0]:
        problems.append(f"{where}: sample size {sample_size}, mdat payload {payload[1] - payload[0]} bytes")
    jpeg = data[payload[0]:payload[1]]
    if jpeg[:2] != b"\xff\xd8" or jpeg[-2:] != b"\xff\xd9":
        problems.append(f"{where}: the mdat does not hold one whole JPEG (SOI ... EOI)")
        return None, sequence
    return jpeg, sequence


def first_decode_time(data, offset, length):
    """The tfdt of the fragment at `data[offset:offset + length]`, or None."""
    try:
        moof = Boxes(data, offset, offset + length).all("moof")[0]
        traf = Boxes(data, moof[1], moof[2]).all("traf")[0]
        tfdt = Boxes(data, traf[1], traf[2]).all("tfdt")[0]
    except (ValueError, IndexError):
        return None
    wide = data[tfdt[1]] == 1
    return struct.unpack(">Q" if wide else ">I", data[tfdt[1] + 4:tfdt[1] + (12 if wide else 8)])[0]


def check(playlist_path, stream_inf=None, live=False):
    """Checks the I-frame image sequence of a local playlist (and `stream_inf`, the master's attribute text for it,
    when given). Returns (problems, images): images are (start, duration, jpeg bytes). With `live`, a live playlist
    (RFC 8216 6.2.1: no EXT-X-ENDLIST or VOD type asked for, an EXT-X-MEDIA-SEQUENCE, EXT-X-GAP entries that have no
    image): its media files may be several, each entry's range following the last one's in the same file, and the
    fragments' tfdt must advance as the playlist's times do from the first one."""
    problems = []
    with open(playlist_path, encoding="utf-8") as f:
        lines = [line.strip() for line in f.read().splitlines() if line.strip()]
    if not lines or lines[0] != "#EXTM3U":
        return ["the playlist does not start with #EXTM3U"], []
    tags = {}
    for line in lines:
        if line.startswith("#EXT"):
            name, _, value = line.partition(":")
            tags.setdefault(name, value)
    version = int(tags.get("#EXT-X-VERSION", "1"))
    if version < 5:
        problems.append(f"EXT-X-VERSION {version}: an EXT-X-MAP in an I-frame playlist needs at least 5")
    required = ["#EXT-X-I-FRAMES-ONLY", "#EXT-X-TARGETDURATION", "#EXT-X-MAP"]
    required += ["#EXT-X-MEDIA-SEQUENCE"] if live else ["#EXT-X-ENDLIST"]
    for name in required:
        if name not in tags:
            problems.append(f"no {name}")
    if not live and tags.get("#EXT-X-PLAYLIST-TYPE") != "VOD":
        problems.append("EXT-X-PLAYLIST-TYPE is not VOD")
    folder = os.path.dirname(os.path.abspath(playlist_path))
    files = {}

    def read(uri):
        path = os.path.join(folder, urllib.parse.unquote(uri))
        if path not in files:
            with open(path, "rb") as f:
                files[path] = f.read()
        return files[path]

    map_attributes = attributes(tags.get("#EXT-X-MAP", ""))
    if "BYTERANGE" not in map_attributes:
        problems.append("the EXT-X-MAP has no BYTERANGE (the init section is part of the media file)")
    resolution = None
    if stream_inf:
        inf = attributes(stream_inf)
        if inf.get("CODECS") != "mjpg":
            problems.append(f"the master's CODECS is {inf.get('CODECS')!r}, expected \"mjpg\"")
        if "RESOLUTION" in inf:
            resolution = tuple(int(v) for v in inf["RESOLUTION"].split("x"))
        else:
            problems.append("the master's line has no RESOLUTION")
        for name in ("BANDWIDTH", "URI"):
            if name not in inf:
                problems.append(f"the master's line has no {name}")
    init_length, init_offset = (int(v) for v in map_attributes.get("BYTERANGE", "0@0").split("@"))
    media = read(map_attributes.get("URI", ""))
    track, timescale = check_initialization(media[init_offset:init_offset + init_length], resolution, problems)
    target = int(tags.get("#EXT-X-TARGETDURATION", "0"))
    images = []
    time = 0.0
    # Where each media file's next entry must start: after the init section in the map's file, else at its start.
    expected_offsets = {map_attributes.get("URI", ""): init_offset + init_length}
    sequence = 0
    peak = 0
    entries = []
    duration = None
    byterange = None
    gap = False
    for line in lines:
        if line.startswith("#EXTINF:"):
            duration = float(line[len("#EXTINF:"):].split(",")[0])
        elif line.startswith("#EXT-X-BYTERANGE:"):
            byterange = line[len("#EXT-X-BYTERANGE:"):]
        elif line == "#EXT-X-GAP":
            gap = True
        elif not line.startswith("#"):
            entries.append((duration, byterange, line, gap))
            duration = byterange = None
            gap = False
    if not entries:
        problems.append("the playlist has no entries")
    if any(entry[3] for entry in entries) and not live:
        problems.append("an EXT-X-GAP entry in a VOD sequence (every image is known)")
    origin = 0.0
    for index, (duration, byterange, uri, gap) in enumerate(entries):
        where = f"entry {index + 1}"
        if duration is None or duration <= 0:
            problems.append(f"{where}: no positive EXTINF")
            continue
        if round(duration) > target:
            problems.append(f"{where}: EXTINF {duration} rounds above EXT-X-TARGETDURATION {target}")
        if gap:
            time += duration
            continue
        if byterange is None or "@" not in byterange:
            problems.append(f"{where}: no EXT-X-BYTERANGE with an explicit offset")
            continue
        length, offset = (int(v) for v in byterange.split("@"))
        data = read(uri)
        expected_offset = expected_offsets.get(uri, 0)
        if offset != expected_offset:
            problems.append(f"{where}: starts at byte {offset}, the previous entry ended at {expected_offset}")
        expected_offsets[uri] = offset + length
        if offset + length > len(data):
            problems.append(f"{where}: the range runs past the file's {len(data)} bytes")
            continue
        if live and not images and timescale:
            # A live playlist's times count from its first entry; the fragments keep the track's own.
            origin = (first_decode_time(data, offset, length) or 0) / timescale - time
        jpeg, sequence = check_fragment(data, offset, length, index, track, timescale, time + origin, duration,
                                        sequence, problems)
        peak = max(peak, length * 8 / duration)
        if jpeg is not None:
            size = jpeg_size(jpeg)
            if size is None:
                problems.append(f"{where}: the JPEG has no frame header")
            else:
                if not size[2]:
                    problems.append(f"{where}: the JPEG is not baseline")
                if resolution and size[:2] != resolution:
                    problems.append(f"{where}: the JPEG is {size[0]}x{size[1]}, RESOLUTION {resolution}")
            images.append((time, duration, jpeg))
        time += duration
    if stream_inf and "BANDWIDTH" in attributes(stream_inf) and int(attributes(stream_inf)["BANDWIDTH"]) < peak:
        problems.append(f"BANDWIDTH {attributes(stream_inf)['BANDWIDTH']} is below the peak {peak:.0f} bit/s")
    return problems, images


if __name__ == "__main__":
    import sys

    arguments = [a for a in sys.argv[1:] if a != "--live"]
    found, pictures = check(arguments[0], live="--live" in sys.argv)
    for problem in found:
        print(problem)
    print(f"{len(found)} problems, {len(pictures)} images")
    sys.exit(1 if found else 0)
