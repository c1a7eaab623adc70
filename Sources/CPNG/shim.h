#ifndef FILMSTRIP_CPNG_SHIM_H
#define FILMSTRIP_CPNG_SHIM_H
#include <png.h>

/* PNG_FORMAT_* are macros built from other macros; give Swift plain constants. */
static const unsigned int filmstrip_png_format_rgb = PNG_FORMAT_RGB;
static const unsigned int filmstrip_png_format_rgba = PNG_FORMAT_RGBA;
#endif
