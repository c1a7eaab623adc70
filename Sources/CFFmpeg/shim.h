#ifndef FILMSTRIP_CFFMPEG_SHIM_H
#define FILMSTRIP_CFFMPEG_SHIM_H

#include <math.h>
#include <stdarg.h>
#include <libavformat/avformat.h>
#include <libavformat/avio.h>
#include <libavcodec/avcodec.h>
#include <libswscale/swscale.h>
#include <libavutil/avutil.h>
#include <libavutil/channel_layout.h>
#include <libavutil/samplefmt.h>
#include <libswresample/swresample.h>
#include <libavfilter/avfilter.h>
#include <libavfilter/buffersink.h>
#include <libavfilter/buffersrc.h>
#include <stdio.h>
#include <string.h>
#include <libavutil/display.h>
#include <libavutil/encryption_info.h>
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
static inline const int32_t *fs_stream_display_matrix(const AVStream *stream) {
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
    return matrix;
}

/* How the display matrix shows the picture: clockwise quarter turns (0-3), plus 4 when the picture is mirrored
   left to right after turning (a matrix with a negative determinant: a reflection, as some front cameras write).
   A reflection is taken apart as a horizontal flip of the display (the matrix's first column negated, as
   av_display_matrix_flip does) after the rotation that is left. */
static inline int fs_stream_display_orientation(const AVStream *stream) {
    const int32_t *matrix = fs_stream_display_matrix(stream);
    if (!matrix) return 0;
    int32_t plain[9];
    memcpy(plain, matrix, sizeof(plain));
    double determinant = (double)matrix[0] * matrix[4] - (double)matrix[1] * matrix[3];
    int mirrored = determinant < 0;
    if (mirrored) {
        plain[0] = -plain[0];
        plain[3] = -plain[3];
        plain[6] = -plain[6];
    }
    double counterClockwise = av_display_rotation_get(plain);
    if (isnan(counterClockwise)) return 0;
    int turns = (int)lround(-counterClockwise / 90.0);
    turns = ((turns % 4) + 4) % 4;
    return turns + (mirrored ? 4 : 0);
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
/* A resampler from an audio frame's format (layout, sample format, rate) to interleaved float at `out_rate` with
   `out_channels` (the default layout for that count); NULL when FFmpeg refuses the conversion. */
static inline SwrContext *fs_swr_for_frame(const AVFrame *frame, int out_rate, int out_channels) {
    AVChannelLayout out, in;
    av_channel_layout_default(&out, out_channels);
    if (frame->ch_layout.order != AV_CHANNEL_ORDER_UNSPEC && frame->ch_layout.nb_channels > 0) {
        if (av_channel_layout_copy(&in, &frame->ch_layout) < 0) return NULL;
    } else {
        av_channel_layout_default(&in, frame->ch_layout.nb_channels > 0 ? frame->ch_layout.nb_channels : 1);
    }
    SwrContext *swr = NULL;
    int result = swr_alloc_set_opts2(&swr, &out, AV_SAMPLE_FMT_FLT, out_rate, &in, (enum AVSampleFormat)frame->format,
                                     frame->sample_rate, 0, NULL);
    av_channel_layout_uninit(&in);
    av_channel_layout_uninit(&out);
    if (result < 0 || swr_init(swr) < 0) {
        swr_free(&swr);
        return NULL;
    }
    return swr;
}

/* Converts a frame (NULL: drains) into `out` (interleaved float, room for `capacity` samples per channel); returns
   the samples per channel written, or a negative error. */
static inline int fs_swr_convert_frame(SwrContext *swr, float *out, int capacity, const AVFrame *frame) {
    uint8_t *planes[1] = {(uint8_t *)out};
    return swr_convert(swr, planes, capacity, frame ? (const uint8_t *const *)frame->extended_data : NULL,
                       frame ? frame->nb_samples : 0);
}

/* A filter graph `abuffer -> atempo -> aformat -> abuffersink` for interleaved float at `sample_rate` with
   `channels` (default layout): changes the tempo by `tempo` (1/16...2; below 0.5 as a chain of halvings) and keeps
   the pitch. NULL on failure. */
static inline AVFilterGraph *fs_tempo_graph(int sample_rate, int channels, double tempo, AVFilterContext **source,
                                            AVFilterContext **sink) {
    AVFilterGraph *graph = avfilter_graph_alloc();
    if (!graph) return NULL;
    AVChannelLayout layout;
    av_channel_layout_default(&layout, channels);
    char name[64];
    av_channel_layout_describe(&layout, name, sizeof name);
    char args[256];
    snprintf(args, sizeof args, "sample_rate=%d:sample_fmt=flt:channel_layout=%s:time_base=1/%d", sample_rate, name,
             sample_rate);
    /* One atempo goes down to 0.5: slower tempos chain halvings first. */
    char chain[512] = "";
    while (tempo < 0.5 - 1e-9 && strlen(chain) < 400) {
        strcat(chain, "atempo=0.5,");
        tempo /= 0.5;
    }
    size_t used = strlen(chain);
    snprintf(chain + used, sizeof chain - used, "atempo=%.6f,aformat=sample_fmts=flt:channel_layouts=%s", tempo, name);
    AVFilterInOut *outputs = avfilter_inout_alloc(), *inputs = avfilter_inout_alloc();
    int result = -1;
    if (outputs && inputs &&
        avfilter_graph_create_filter(source, avfilter_get_by_name("abuffer"), "in", args, NULL, graph) >= 0 &&
        avfilter_graph_create_filter(sink, avfilter_get_by_name("abuffersink"), "out", NULL, NULL, graph) >= 0) {
        outputs->name = av_strdup("in");
        outputs->filter_ctx = *source;
        outputs->pad_idx = 0;
        outputs->next = NULL;
        inputs->name = av_strdup("out");
        inputs->filter_ctx = *sink;
        inputs->pad_idx = 0;
        inputs->next = NULL;
        result = avfilter_graph_parse_ptr(graph, chain, &inputs, &outputs, NULL);
        if (result >= 0) result = avfilter_graph_config(graph, NULL);
    }
    avfilter_inout_free(&inputs);
    avfilter_inout_free(&outputs);
    if (result < 0) {
        avfilter_graph_free(&graph);
        return NULL;
    }
    return graph;
}

/* Feeds `frames` interleaved float frames (NULL: the end) to a tempo graph's source. */
static inline int fs_tempo_push(AVFilterContext *source, const float *samples, int frames, int channels,
                                int sample_rate, int64_t pts) {
    if (!samples) return av_buffersrc_add_frame(source, NULL);
    AVFrame *frame = av_frame_alloc();
    if (!frame) return AVERROR(ENOMEM);
    frame->nb_samples = frames;
    frame->format = AV_SAMPLE_FMT_FLT;
    frame->sample_rate = sample_rate;
    frame->pts = pts;
    av_channel_layout_default(&frame->ch_layout, channels);
    int result = av_frame_get_buffer(frame, 0);
    if (result >= 0) {
        memcpy(frame->data[0], samples, (size_t)frames * (size_t)channels * sizeof(float));
        result = av_buffersrc_add_frame(source, frame);
    }
    av_frame_free(&frame);
    return result;
}

/* The next filtered frame's interleaved samples copied into `out` (room for `capacity` frames); the frames copied,
   0 when none is ready, negative on error. A frame larger than `capacity` is cut. */
static inline int fs_tempo_pull(AVFilterContext *sink, float *out, int capacity, int channels) {
    AVFrame *frame = av_frame_alloc();
    if (!frame) return AVERROR(ENOMEM);
    int result = av_buffersink_get_frame(sink, frame);
    if (result == AVERROR(EAGAIN) || result == AVERROR_EOF) {
        av_frame_free(&frame);
        return 0;
    }
    if (result >= 0) {
        int frames = frame->nb_samples < capacity ? frame->nb_samples : capacity;
        memcpy(out, frame->data[0], (size_t)frames * (size_t)channels * sizeof(float));
        result = frames;
    }
    av_frame_free(&frame);
    return result;
}

#endif
