// SDL2, bound at run time: `filmstrip play --window` and `WindowOutput` load libSDL2 with dlopen when a window
// opens, so no other command (and no program that never opens a window) loads it or its dependencies at start.
// The headers give the types and constants; every function is called through `FSSDLFunctions`.
#ifndef FILMSTRIP_CSDL_H
#define FILMSTRIP_CSDL_H

#define SDL_MAIN_HANDLED 1
#include <SDL2/SDL.h>
#include <stddef.h>

#define FS_SDL_FUNCTIONS(X)                                                                                            \
    X(SDL_Init)                                                                                                        \
    X(SDL_InitSubSystem)                                                                                               \
    X(SDL_QuitSubSystem)                                                                                               \
    X(SDL_Quit)                                                                                                        \
    X(SDL_GetError)                                                                                                    \
    X(SDL_SetHint)                                                                                                     \
    X(SDL_GetCurrentVideoDriver)                                                                                       \
    X(SDL_GetCurrentAudioDriver)                                                                                       \
    X(SDL_CreateWindow)                                                                                                \
    X(SDL_DestroyWindow)                                                                                               \
    X(SDL_GetWindowSize)                                                                                               \
    X(SDL_GetWindowFlags)                                                                                              \
    X(SDL_SetWindowFullscreen)                                                                                         \
    X(SDL_SetWindowTitle)                                                                                              \
    X(SDL_CreateRenderer)                                                                                              \
    X(SDL_DestroyRenderer)                                                                                             \
    X(SDL_GetRendererInfo)                                                                                             \
    X(SDL_GetRendererOutputSize)                                                                                       \
    X(SDL_CreateTexture)                                                                                               \
    X(SDL_DestroyTexture)                                                                                              \
    X(SDL_UpdateTexture)                                                                                               \
    X(SDL_UpdateYUVTexture)                                                                                            \
    X(SDL_SetTextureBlendMode)                                                                                         \
    X(SDL_SetYUVConversionMode)                                                                                        \
    X(SDL_SetRenderDrawColor)                                                                                          \
    X(SDL_SetRenderDrawBlendMode)                                                                                      \
    X(SDL_RenderClear)                                                                                                 \
    X(SDL_RenderCopy)                                                                                                  \
    X(SDL_RenderFillRect)                                                                                              \
    X(SDL_RenderFillRects)                                                                                             \
    X(SDL_RenderPresent)                                                                                               \
    X(SDL_WaitEventTimeout)                                                                                            \
    X(SDL_PollEvent)                                                                                                   \
    X(SDL_PushEvent)                                                                                                   \
    X(SDL_RegisterEvents)                                                                                              \
    X(SDL_OpenAudioDevice)                                                                                             \
    X(SDL_CloseAudioDevice)                                                                                            \
    X(SDL_PauseAudioDevice)

#define FS_SDL_FIELD(name) __typeof__(name) *_Nonnull name;
/// The SDL2 functions Filmstrip calls, resolved from the library loaded at run time.
typedef struct FSSDLFunctions {
    FS_SDL_FUNCTIONS(FS_SDL_FIELD)
} FSSDLFunctions;
#undef FS_SDL_FIELD

/// Loads libSDL2 (once; later calls return the same table) and resolves every function. NULL when the library or
/// a function is missing, with the reason in `error` (`capacity` bytes).
const FSSDLFunctions *_Nullable fs_sdl_load(char *_Nonnull error, size_t capacity);

#endif
