#include "CSDL.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

static FSSDLFunctions functions;
static const FSSDLFunctions *loaded;
static char failure[512];
static pthread_once_t once = PTHREAD_ONCE_INIT;

static void load(void) {
    // The versioned name first (the runtime package); the unversioned one comes with the development package.
    static const char *const names[] = {
#if defined(__APPLE__)
        "libSDL2-2.0.0.dylib", "libSDL2.dylib", "/opt/homebrew/lib/libSDL2-2.0.0.dylib",
        "/usr/local/lib/libSDL2-2.0.0.dylib",
#else
        "libSDL2-2.0.so.0", "libSDL2.so",
#endif
    };
    void *library = NULL;
    for (size_t i = 0; i < sizeof names / sizeof names[0] && library == NULL; i++) {
        library = dlopen(names[i], RTLD_NOW | RTLD_LOCAL);
    }
    if (library == NULL) {
        const char *reason = dlerror();
        snprintf(failure, sizeof failure, "SDL2 is not installed (%s)", reason ? reason : "not found");
        return;
    }
#define FS_SDL_RESOLVE(name)                                                                                           \
    functions.name = (__typeof__(name) *)dlsym(library, #name);                                                        \
    if (functions.name == NULL) {                                                                                      \
        snprintf(failure, sizeof failure, "the SDL2 library lacks %s (SDL 2.0.8 or later is needed)", #name);        \
        return;                                                                                                        \
    }
    FS_SDL_FUNCTIONS(FS_SDL_RESOLVE)
#undef FS_SDL_RESOLVE
    loaded = &functions;
}

const FSSDLFunctions *fs_sdl_load(char *error, size_t capacity) {
    pthread_once(&once, load);
    if (loaded == NULL && capacity > 0) {
        snprintf(error, capacity, "%s", failure);
    }
    return loaded;
}
