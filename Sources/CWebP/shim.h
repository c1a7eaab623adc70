#ifndef FILMSTRIP_CWEBP_SHIM_H
#define FILMSTRIP_CWEBP_SHIM_H
#include <webp/decode.h>
#include <webp/encode.h>
#include <webp/mux.h>

/* WebPConfigInit and WebPPictureInit are inline wrappers that pass the ABI version; give Swift plain functions. */
static inline int filmstrip_webp_config_init(WebPConfig *config, float quality) {
    return WebPConfigPreset(config, WEBP_PRESET_DEFAULT, quality);
}
static inline int filmstrip_webp_picture_init(WebPPicture *picture) { return WebPPictureInit(picture); }
static inline int filmstrip_webp_features(const uint8_t *data, size_t size, WebPBitstreamFeatures *features) {
    return WebPGetFeatures(data, size, features) == VP8_STATUS_OK;
}
/* The animation encoder's constructors are inline wrappers that pass the ABI version too. */
static inline int filmstrip_webp_anim_options_init(WebPAnimEncoderOptions *options) {
    return WebPAnimEncoderOptionsInit(options);
}
static inline WebPAnimEncoder *filmstrip_webp_anim_new(int width, int height, const WebPAnimEncoderOptions *options) {
    return WebPAnimEncoderNew(width, height, options);
}
#endif
