#!/usr/bin/env bash
# Regenerates Samples/sample.mp4, a 2-minute generated test pattern (ffmpeg's testsrc, which draws the running
# seconds in large digits; 320x180 H.264, a keyframe every 2 s), and Samples/sprites/: one 160x90 thumbnail of the
# same pattern every 2 s, 5x4 tiles per sprite sheet, and a WebVTT track with #xywh= regions. Needs the ffmpeg
# CLI. The output is committed; `make demo` does not run this script.
set -euo pipefail
cd "$(dirname "$0")"
out=sprites
duration=120 interval=2 columns=5 rows=4 width=160 height=90
rm -rf "$out" && mkdir -p "$out"

ffmpeg -hide_banner -loglevel error -y -f lavfi -i "testsrc=size=320x180:rate=25:duration=${duration}" \
    -c:v libx264 -preset veryslow -crf 32 -g 50 -pix_fmt yuv420p -movflags +faststart sample.mp4

ffmpeg -hide_banner -loglevel error -f lavfi -i "testsrc=size=320x180:rate=25:duration=${duration}" \
    -vf "select='not(mod(n\,$((25 * interval))))',scale=${width}:${height},tile=${columns}x${rows}" \
    -fps_mode passthrough -q:v 4 -start_number 1 "$out/sprite-%d.jpg"

count=$((duration / interval)) per_sheet=$((columns * rows))
stamp() { printf '%02d:%02d:%02d.000' $(($1 / 3600)) $(($1 / 60 % 60)) $(($1 % 60)); }
{
    echo "WEBVTT - Filmstrip sample: ${count} thumbnails of a generated test pattern"
    echo
    for ((k = 0; k < count; k++)); do
        cell=$((k % per_sheet))
        echo "$(stamp $((k * interval))) --> $(stamp $(((k + 1) * interval)))"
        echo "sprite-$((k / per_sheet + 1)).jpg#xywh=$((cell % columns * width)),$((cell / columns * height)),${width},${height}"
        echo
    done
} > "$out/thumbnails.vtt"
echo "wrote $(ls "$out" | wc -l) files to Samples/$out"
