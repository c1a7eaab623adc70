import CSDL
import Foundation

/// Why a window cannot open.
public struct WindowError: Error, CustomStringConvertible, Sendable {
    /// A sentence for people.
    public let message: String

    init(_ message: String) { self.message = message }

    public var description: String { message }
}

/// The SDL2 functions, from the library loaded when the first window opens.
enum SDLLibrary {
    static func load() throws(WindowError) -> FSSDLFunctions {
        var reason = [CChar](repeating: 0, count: 512)
        guard let table = fs_sdl_load(&reason, reason.count) else {
            throw WindowError(String(decoding: reason.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self))
        }
        return table.pointee
    }

    /// Whether a display can be reached: on Linux `DISPLAY` (X11) or `WAYLAND_DISPLAY` is set.
    static func displayAvailable(_ environment: [String: String] = ProcessInfo.processInfo.environment) -> Bool {
        #if os(Linux)
            return !(environment["DISPLAY"] ?? "").isEmpty || !(environment["WAYLAND_DISPLAY"] ?? "").isEmpty
        #else
            return true
        #endif
    }
}

extension FSSDLFunctions {
    /// SDL's last error message.
    var lastError: String { SDL_GetError().map { String(cString: $0) } ?? "unknown error" }
}
