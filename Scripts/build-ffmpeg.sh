#!/usr/bin/env bash
# Builds the FFmpeg that Filmstrip links: static libraries from the distribution's own patched source package, with
# only the demuxers, parsers, decoders and filters Filmstrip uses (and FFmpeg's SIMD code, assembled with nasm).
# Linked to Debian's shared FFmpeg, every process maps about 190 libraries (every codec library Debian enables)
# before it does anything; this one brings in libdav1d and zlib.
#
#   Scripts/build-ffmpeg.sh            builds it if the cache lacks it; prints nothing when it is there
#   Scripts/build-ffmpeg.sh --prefix   prints where it is (or would be) installed
#
# The package builds against it when FILMSTRIP_STATIC_FFMPEG=1 and pkg-config finds `filmstrip-ffmpeg` (the Makefile
# sets both); otherwise against the system's shared FFmpeg.
#
# The build is cached under ${FILMSTRIP_CACHE:-~/.cache/filmstrip}/ffmpeg-VERSION-HASH, HASH being that of this
# file: a change to the configuration below builds a new one. FILMSTRIP_SYSTEM_FFMPEG=1 skips it (the package then
# builds against the system's FFmpeg, as a plain `swift build` does).
set -euo pipefail

# The source package, pinned: Debian 12's FFmpeg with its security patches.
package=ffmpeg
version=7:5.1.9-0+deb12u1
upstream=5.1.9

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
hash="$(sha256sum "${BASH_SOURCE[0]}" | cut -c1-12)"
cache="${FILMSTRIP_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/filmstrip}"
prefix="$cache/ffmpeg-$upstream-$hash"

if [ "${1:-}" = "--prefix" ]; then
    echo "$prefix"
    exit 0
fi
[ -f "$prefix/.complete" ] && exit 0

sudo=""
[ "$(id -u)" -eq 0 ] || sudo="sudo"
needed=()
command -v nasm >/dev/null 2>&1 || needed+=(nasm)
command -v dpkg-source >/dev/null 2>&1 || needed+=(dpkg-dev)
pkg-config --exists dav1d 2>/dev/null || needed+=(libdav1d-dev)
pkg-config --exists zlib 2>/dev/null || needed+=(zlib1g-dev)
if ((${#needed[@]})); then
    echo "ffmpeg: installing ${needed[*]}"
    $sudo apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${needed[@]}" >/dev/null
fi

work="$(mktemp -d "${TMPDIR:-/tmp}/filmstrip-ffmpeg.XXXXXX")"
trap 'rm -rf "$work"' EXIT
cd "$work"
echo "ffmpeg: fetching the source package $package $version"
if ! apt-get source -qq --download-only "$package=$version" >/dev/null 2>&1; then
    # The source lines are off by default: add deb-src beside each deb entry of the system's sources.
    if [ -f /etc/apt/sources.list.d/debian.sources ] && ! grep -q '^Types:.*deb-src' /etc/apt/sources.list.d/*.sources; then
        sed 's/^Types: deb$/Types: deb-src/' /etc/apt/sources.list.d/debian.sources |
            $sudo tee /etc/apt/sources.list.d/filmstrip-deb-src.sources >/dev/null
    elif [ -f /etc/apt/sources.list ]; then
        grep '^deb ' /etc/apt/sources.list | sed 's/^deb /deb-src /' |
            $sudo tee /etc/apt/sources.list.d/filmstrip-deb-src.list >/dev/null
    fi
    $sudo apt-get update -qq
    if ! apt-get source -qq --download-only "$package=$version" >/dev/null 2>&1; then
        echo "ffmpeg: $version is not in the package sources; building the distribution's current $package" >&2
        apt-get source -qq --download-only "$package" >/dev/null
    fi
fi
dsc="$(ls "${package}"_*.dsc | head -1)"
dpkg-source --no-check -x "$dsc" src >/dev/null
cd src

echo "ffmpeg: configuring and building (a few minutes on two cores)"
./configure \
    --prefix="$prefix" --enable-static --disable-shared --enable-pic --build-suffix=_filmstrip \
    --disable-programs --disable-doc --disable-debug --disable-network --disable-autodetect --disable-everything \
    --disable-avdevice --disable-postproc \
    --enable-zlib --enable-libdav1d \
    --enable-protocol=file,pipe,data,crypto \
    --enable-demuxer=mov,mpegts,mpegtsraw,matroska,avi,ogg,flv,mpegps,hls,wav,aac,mp3,ac3,eac3,flac,loas \
    --enable-demuxer=asf,mxf,dv,rm,gxf,nut,yuv4mpegpipe,h263,h261,vc1,vc1t,aiff,au,caf,w64,amr,dts,truehd,mlp,wv,ape \
    --enable-demuxer=h264,hevc,m4v,mpegvideo,ivf,obu,mjpeg,image2 \
    --enable-parser=h264,hevc,vp8,vp9,av1,mpegvideo,mpeg4video,h263,h261,mjpeg,vp3,vc1,dnxhd,rv30,rv40,dvaudio \
    --enable-parser=aac,aac_latm,mpegaudio,ac3,opus,vorbis,flac,dca,mlp,gsm,cook,amr \
    --enable-decoder=h264,hevc,vp8,vp9,libdav1d,mpeg1video,mpeg2video,mpeg4,h263,flv,theora,vp3,prores,mjpeg \
    --enable-decoder=h261,h263i,h263p,msmpeg4v1,msmpeg4v2,msmpeg4v3,wmv1,wmv2,wmv3,vc1,vp6,vp6a,vp6f,dvvideo \
    --enable-decoder=dnxhd,ffv1,mjpegb,jpeg2000,rawvideo,svq1,svq3,cinepak,qtrle,huffyuv,ffvhuff,utvideo \
    --enable-decoder=rv10,rv20,rv30,rv40,indeo3,indeo4,indeo5,msvideo1,flashsv,flashsv2,tscc,tscc2,fraps,zmbv \
    --enable-decoder=aac,aac_fixed,aac_latm,mp1,mp2,mp3,mp1float,mp2float,mp3float,ac3,eac3,opus,vorbis,flac,alac \
    --enable-decoder=amrnb,amrwb,'pcm*',dca,truehd,mlp,wmav1,wmav2,wmapro,wmalossless,wavpack,ape,tta,s302m \
    --enable-decoder=adpcm_ima_wav,adpcm_ima_qt,adpcm_ms,adpcm_swf,adpcm_g722,adpcm_g726,nellymoser,gsm,gsm_ms \
    --enable-decoder=qdm2,qdmc,cook,ra_144,ra_288,atrac3 \
    --enable-decoder=png,bmp,gif,webp \
    --enable-bsf=h264_mp4toannexb,hevc_mp4toannexb,vp9_superframe_split,av1_frame_split,extract_extradata \
    --enable-filter=abuffer,abuffersink,atempo,aformat,aresample,anull \
    >configure.log 2>&1 || {
    tail -30 configure.log >&2
    exit 1
}
make -j"$(nproc)" >build.log 2>&1 || {
    tail -40 build.log >&2
    exit 1
}
rm -rf "$prefix"
make install >/dev/null
# One pkg-config entry for all of it, in static link order. The libraries' own names carry a suffix, so no linker
# search path can swap in the system's shared FFmpeg.
cat >"$prefix/lib/pkgconfig/filmstrip-ffmpeg.pc" <<EOF
prefix=$prefix
Name: filmstrip-ffmpeg
Description: FFmpeg $upstream for Filmstrip (static, only what Filmstrip uses)
Version: $upstream
Cflags: -I\${prefix}/include
Libs: -L\${prefix}/lib -lavfilter_filmstrip -lavformat_filmstrip -lavcodec_filmstrip -lswscale_filmstrip -lswresample_filmstrip -lavutil_filmstrip -ldav1d -lz -latomic -lm
EOF
touch "$prefix/.complete"
echo "ffmpeg: installed in $prefix"
