import Filmstrip

/// What `filmstrip --version` prints: the package's version (no release has been made yet) and the FFmpeg it links.
let filmstripVersion = "0.1.0-dev (FFmpeg \(MediaLibraries.ffmpegVersion))"
