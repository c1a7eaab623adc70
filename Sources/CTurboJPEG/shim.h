#ifndef FILMSTRIP_CTURBOJPEG_SHIM_H
#define FILMSTRIP_CTURBOJPEG_SHIM_H
#include <stddef.h>
#include <turbojpeg.h>
#endif
