#!/usr/bin/env bash
# Loads the bundled sample sprite track, writes a few thumbnails to demo-output/ and prints time -> image, region;
# then generates the preview track of the bundled sample video and writes demo-output/index.html, a watch page
# with scrub previews that works straight from disk.
set -euo pipefail
cd "$(dirname "$0")/.."
bin="$(swift build --show-bin-path)/filmstrip"
track=Samples/sprites/thumbnails.vtt
out=demo-output
rm -rf "$out" && mkdir -p "$out"

echo "Track: $track"
"$bin" inspect "$track" | sed 's/^/  /'
echo
printf '%-8s  %-17s  %-14s  %-18s  %-7s  %s\n' "time" "cue" "image" "region" "bytes" "written to"
for t in 0 17 42.5 64 99.9 119; do
    json=$("$bin" thumbnail "$track" --at "$t" --json --output "$out/thumbnail-at-$t.jpg")
    re='"start": ([0-9.]+), "end": ([0-9.]+), "image": "([^"]*)", "region": \{"x": ([0-9]+), "y": ([0-9]+), "w": ([0-9]+), "h": ([0-9]+)\}, "bytes": ([0-9]+), "output": "([^"]*)"'
    if [[ $json =~ $re ]]; then
        m=("${BASH_REMATCH[@]}")
        printf '%-8s  %-17s  %-14s  %-18s  %-7s  %s\n' "$t s" "${m[1]}–${m[2]} s" "$(basename "${m[3]}")" \
            "${m[4]},${m[5]} ${m[6]}x${m[7]}" "${m[8]}" "${m[9]#"$PWD/"}"
    else
        echo "unexpected output: $json" >&2
        exit 1
    fi
done
echo
echo "Each thumbnail shows the running seconds of the test pattern: open $out/ to compare them with the times."

echo
echo "Watch page: generating the preview track of Samples/sample.mp4 and writing a page that works from disk"
"$bin" page Samples/sample.mp4 --output "$out" | sed 's/^/  /'
echo
echo "Open it straight from disk (no server needed):"
echo "  file://$PWD/$out/index.html"
echo "Browse a folder of your own videos, with previews made on first view:"
echo "  $bin serve ~/Videos        # then open http://127.0.0.1:8080/"
