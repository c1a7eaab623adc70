#!/usr/bin/env bash
# Catalog generation: videos per hour per core on 24 short 720p clips (10 s, H.264, a keyframe every 2 s, a
# thumbnail a second), one process against two shards side by side, and against the usual ffmpeg recipe (one
# `ffmpeg -vf fps=1,scale,tile` per video, two at a time); then the cost of a rerun where everything is done, on
# 1,000 items, against listing the files and against opening each video (ffprobe).
# Usage: Benchmarks/catalog.sh BIN_DIR   (clips are made once in bench-output/catalog)
set -euo pipefail
cd "$(dirname "$0")/.."
bin="$1/filmstrip"
media=bench-output/catalog
cores=$(nproc)
mkdir -p "$media/clips"
for i in $(seq -w 1 24); do
    clip="$media/clips/clip-$i.mp4"
    [ -f "$clip" ] || ffmpeg -loglevel error -y -f lavfi -i "testsrc2=s=1280x720:r=25:d=10,hue=h=$((10#$i * 15))" \
        -c:v libx264 -preset veryfast -g 50 -pix_fmt yuv420p "$clip"
done
for clip in "$media"/clips/clip-*.mp4; do echo "clips/$(basename "$clip")"; done >"$media/list.txt"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
now() { date +%s.%N; }
rate() { awk -v n="$1" -v s="$2" -v c="$3" 'BEGIN { printf "%.0f", n / s * 3600 / c }'; }
list="$media/list.txt"
settings=(--interval 1 --formats vtt)

# The median of three runs of "$@", each into an empty $work/out.
median() {
    local runs=() t0
    for _ in 1 2 3; do
        rm -rf "$work/out"
        t0=$(now)
        "$@" >/dev/null
        runs+=("$(awk -v a="$t0" -v b="$(now)" 'BEGIN { print b - a }')")
    done
    printf '%s\n' "${runs[@]}" | sort -g | sed -n 2p
}
one_process() { "$bin" catalog generate "$list" --output "$work/out" --jobs 2 "${settings[@]}"; }
two_shards() {
    for shard in 0 1; do
        "$bin" catalog generate "$list" --output "$work/out" --shard "$shard/2" --cores 1 "${settings[@]}" &
    done
    wait
}
ffmpeg_recipe() {
    mkdir -p "$work/out"
    # shellcheck disable=SC2016
    printf '%s\0' "$media"/clips/clip-*.mp4 | xargs -0 -P 2 -I{} sh -c \
        'ffmpeg -loglevel error -y -i "$1" -vf fps=1,scale=160:-2,tile=10x10 -frames:v 1 "$2/$(basename "$1").jpg"' \
        _ {} "$work/out"
}

echo "catalog generate: 24 clips of 10 s 1280x720 H.264, a thumbnail a second, on $cores cores (median of 3)"
one=$(median one_process)
two=$(median two_shards)
reference=$(median ffmpeg_recipe)
printf '  %-44s %6.2f s  %6s videos/hour/core\n' "one process, --jobs 2" "$one" "$(rate 24 "$one" "$cores")"
printf '  %-44s %6.2f s  %6s videos/hour/core\n' "two shards (--shard 0/2, 1/2), a core each" "$two" \
    "$(rate 24 "$two" "$cores")"
printf '  %-44s %6.2f s  %6s videos/hour/core\n' "ffmpeg fps,scale,tile per video, 2 at a time" "$reference" \
    "$(rate 24 "$reference" "$cores")"
awk -v a="$one" -v b="$reference" 'BEGIN { printf "  one process against the ffmpeg recipe: %.2fx its time\n", a / b }'

# A rerun with everything done: 1,000 items (links to 1 s clips), against listing them and opening each.
mkdir -p "$work/many"
ffmpeg -loglevel error -y -f lavfi -i testsrc2=s=320x180:r=25:d=1 -c:v libx264 -preset veryfast -pix_fmt yuv420p \
    "$work/tiny.mp4"
for i in $(seq 1 1000); do ln "$work/tiny.mp4" "$work/many/v$i.mp4"; done
( cd "$work/many" && ls ) > "$work/many.txt"
sed -i 's|^|many/|' "$work/many.txt"
"$bin" catalog generate "$work/many.txt" --output "$work/manyout" --jobs 2 >/dev/null
t0=$(now)
"$bin" catalog generate "$work/many.txt" --output "$work/manyout" --jobs 2 >/dev/null
rerun=$(awk -v a="$t0" -v b="$(now)" 'BEGIN { print b - a }')
t0=$(now)
"$bin" catalog status "$work/many.txt" "$work/manyout" >/dev/null
status=$(awk -v a="$t0" -v b="$(now)" 'BEGIN { print b - a }')
t0=$(now)
find "$work/many" -name '*.mp4' -exec stat -c '%s %Y' {} + >/dev/null
listing=$(awk -v a="$t0" -v b="$(now)" 'BEGIN { print b - a }')
t0=$(now)
for i in $(seq 1 100); do ffprobe -v error -show_entries format=duration "$work/many/v$i.mp4" >/dev/null; done
probe=$(awk -v a="$t0" -v b="$(now)" 'BEGIN { print (b - a) * 10 }')
echo "rerun with all 1,000 items complete (1 s clips)"
printf '  %-44s %6.3f s  (%.0f us per item)\n' "catalog generate" "$rerun" "$(awk -v s="$rerun" 'BEGIN { print s * 1000 }')"
printf '  %-44s %6.3f s\n' "catalog status" "$status"
printf '  %-44s %6.3f s\n' "listing them: find -exec stat" "$listing"
printf '  %-44s %6.3f s  (100 timed, x10)\n' "opening each: ffprobe" "$probe"
awk -v a="$rerun" -v b="$probe" 'BEGIN { printf "  the rerun against opening every video: %.3fx its time\n", a / b }'
