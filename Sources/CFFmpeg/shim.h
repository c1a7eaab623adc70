#ifndef FILMSTRIP_CFFMPEG_SHIM_H
#define FILMSTRIP_CFFMPEG_SHIM_H

#include <math.h>
#include <stdarg.h>
#include <libavformat/avformat.h>
#include <libavformat/avio.h>
#include <libavcodec/avcodec.h>
#include <libswscale/swscale.h>
#include <libavutil/avutil.h>
#include <libavutil/display.h>
#include <libavutil/error.h>
#include <libavutil/imgutils.h>
#include <libavutil/log.h>
#include <libavutil/opt.h>

/* Macros that do not import into Swift, as functions. */
static inline int fs_averror(int code) { return AVERROR(code); }
static inline int fs_averror_eof(void) { return AVERROR_EOF; }
static inline int fs_averror_exit(void) { return AVERROR_EXIT; }
static inline int fs_averror_eagain(void) { return AVERROR(EAGAIN); }
static inline int fs_averror_invaliddata(void) { return AVERROR_INVALIDDATA; }
static inline int fs_averror_stream_not_found(void) { return AVERROR_STREAM_NOT_FOUND; }
static inline int64_t fs_nopts_value(void) { return AV_NOPTS_VALUE; }
static inline int fs_avseek_size(void) { return AVSEEK_SIZE; }
static inline int fs_avseek_force(void) { return AVSEEK_FORCE; }
static inline int64_t fs_time_base(void) { return AV_TIME_BASE; }

static inline void fs_error_string(int code, char *buffer, size_t size) {
    if (av_strerror(code, buffer, size) < 0) snprintf(buffer, size, "FFmpeg error %d", code);
}

/* Rotation of a stream's display matrix in degrees counter-clockwise (0 when there is none).
   FFmpeg 6.1 moved stream side data into codecpar->coded_side_data. */
static inline double fs_stream_display_rotation(const AVStream *stream) {
    const int32_t *matrix = NULL;
#if LIBAVFORMAT_VERSION_INT >= AV_VERSION_INT(60, 15, 100)
    const AVPacketSideData *side = av_packet_side_data_get(
        stream->codecpar->coded_side_data, stream->codecpar->nb_coded_side_data, AV_PKT_DATA_DISPLAYMATRIX);
    if (side && side->size >= 9 * sizeof(int32_t)) matrix = (const int32_t *)side->data;
#else
    size_t size = 0;
    const uint8_t *data = av_stream_get_side_data(stream, AV_PKT_DATA_DISPLAYMATRIX, &size);
    if (data && size >= 9 * sizeof(int32_t)) matrix = (const int32_t *)data;
#endif
    if (!matrix) return 0;
    double rotation = av_display_rotation_get(matrix);
    return isnan(rotation) ? 0 : rotation;
}

static inline int fs_frame_is_key(const AVFrame *frame) {
#ifdef AV_FRAME_FLAG_KEY
    return (frame->flags & AV_FRAME_FLAG_KEY) != 0;
#else
    return frame->key_frame;
#endif
}

static inline int fs_packet_is_key(const AVPacket *packet) { return (packet->flags & AV_PKT_FLAG_KEY) != 0; }

/* Custom I/O callbacks; FFmpeg 7 made the write buffer const, which changes the function type. */
typedef int (*fs_read_packet)(void *opaque, uint8_t *buffer, int size);
typedef int64_t (*fs_seek)(void *opaque, int64_t offset, int whence);
static inline AVIOContext *fs_avio_alloc_read_context(unsigned char *buffer, int size, void *opaque,
                                                      fs_read_packet read, fs_seek seek) {
    return avio_alloc_context(buffer, size, 0, opaque, read, NULL, seek);
}

/* FFmpeg logs through a variadic callback, which Swift cannot implement: the line is formatted here and handed to
   a plain function pointer. */
typedef void (*fs_log_sink)(int level, const char *line);
static fs_log_sink fs_current_log_sink = NULL;
static void fs_log_callback(void *context, int level, const char *format, va_list arguments) {
    fs_log_sink sink = fs_current_log_sink;
    if (!sink || level > av_log_get_level()) return;
    char line[1024];
    int print_prefix = 1;
    av_log_format_line(context, level, format, arguments, line, sizeof(line), &print_prefix);
    sink(level, line);
}
static inline void fs_install_log_sink(fs_log_sink sink, int level) {
    fs_current_log_sink = sink;
    av_log_set_level(level);
    av_log_set_callback(fs_log_callback);
}
static inline int fs_log_level_warning(void) { return AV_LOG_WARNING; }
static inline int fs_log_level_error(void) { return AV_LOG_ERROR; }
static inline int fs_log_level_info(void) { return AV_LOG_INFO; }


/// The timestamp of index entry `i` of `stream` when it is a keyframe, else INT64_MIN (bitfields stay in C).
static inline int64_t fs_index_keyframe_timestamp(const AVStream *stream, int i) {
    const AVIndexEntry *entry = avformat_index_get_entry((AVStream *)stream, i);
    if (!entry || !(entry->flags & AVINDEX_KEYFRAME)) return INT64_MIN;
    return entry->timestamp;
}
#endif
