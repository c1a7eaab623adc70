#!/usr/bin/env bash
# `make bench`: the thumbnails-engine benchmarks, then the media benchmarks against the ffmpeg CLI (whose 10-minute
# inputs are made once and kept in bench-output/media), then `filmstrip serve` under wrk, the catalog, and the
# window's A/V offset and smoothness through a capture rig (against ffplay), and mpv's scrub previews (against a
# second mpv seeking by keyframe), the image URLs of `serve` (against ffmpeg per request), and what Common
# Encryption costs in playback (against the same stream clear). The report is kept in
# bench-output/report.txt.
set -euo pipefail
cd "$(dirname "$0")/.."
mkdir -p bench-output
bin="$(swift build -c release --show-bin-path)"
{
    "$bin/FilmstripBench"
    "$bin/FilmstripBench" media bench-output/media
    "$bin/FilmstripBench" live bench-output/media
    echo
    Benchmarks/serve.sh "$bin"
    echo
    Benchmarks/catalog.sh "$bin"
    echo
    python3 Benchmarks/window_sync.py "$bin/filmstrip" bench-output/window
    echo
    python3 Benchmarks/scrub_previews.py "$bin/filmstrip" bench-output/scrub
    echo
    python3 Benchmarks/image_urls.py "$bin/filmstrip" bench-output/images
    echo
    python3 Benchmarks/decryption.py "$bin/filmstrip" bench-output/decryption
    echo
    python3 Benchmarks/download.py "$bin/filmstrip" bench-output/download
} | tee bench-output/report.txt
