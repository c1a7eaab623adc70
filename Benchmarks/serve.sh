#!/usr/bin/env bash
# `filmstrip serve` under load: wrk with 100 connections for 30 s (SERVE_SECONDS) on /api/thumbnail, t varying with
# every request: first before the video's track exists, with nearly every t new (each answer a keyframe decoded by
# the frames engine), then from the generated track (crops of its sheets, t in 0.1 s steps), then every endpoint
# mixed: thumbnails, track JSON, sheets, status, the pages and byte ranges of the video.
# Usage: Benchmarks/serve.sh BIN_DIR
set -euo pipefail
cd "$(dirname "$0")/.."
bin="$1/filmstrip"
seconds="${SERVE_SECONDS:-30}"
work="$(mktemp -d)"
mkdir -p "$work/library" "$work/cache"
cp Samples/sample.mp4 "$work/library/"
"$bin" serve "$work/library" --port 0 --cache-dir "$work/cache" >"$work/serve.log" 2>&1 &
pid=$!
trap 'kill $pid 2>/dev/null; wait $pid 2>/dev/null; rm -rf "$work"' EXIT
for _ in $(seq 100); do
    url="$(grep -o 'http://[^ ]*' "$work/serve.log" | head -1 || true)"
    [ -n "$url" ] && break
    sleep 0.1
done
[ -n "$url" ] || { echo "serve did not start" >&2; cat "$work/serve.log" >&2; exit 1; }

echo "filmstrip serve: wrk -c100 -d${seconds}s on /api/thumbnail (2-minute 320x180 sample, t varies per request)"
printf '  %-42s ' "before the track: a keyframe decode each"
FILMSTRIP_STEP=0.0001 wrk -t2 -c100 -d"${seconds}s" --timeout 10s -s Benchmarks/thumbnail.lua "$url" | tail -1
curl -sf "${url}api/track?src=sample.mp4" >/dev/null
printf '  %-42s ' "from the generated track"
wrk -t2 -c100 -d"${seconds}s" --timeout 10s -s Benchmarks/thumbnail.lua "$url" | tail -1
printf '  %-42s ' "every endpoint, mixed (Benchmarks/mixed.lua)"
wrk -t2 -c100 -d"${seconds}s" --timeout 10s -s Benchmarks/mixed.lua "$url" | tail -1
echo "  resident memory of the server after the runs: $(($(awk '/VmRSS/ {print $2}' /proc/$pid/status) / 1024)) MB"
