#if canImport(CCurl)
    import CCurl
    import FilmstripSync
    import Foundation

    /// One libcurl multi handle and the thread that drives it: transfers are added and cancelled from any thread
    /// (the thread is woken with `curl_multi_wakeup`), and every libcurl call, callback and timeout check happens on
    /// that thread.
    final class CurlEngine: Sendable {
        private struct Inbox {
            var added: [CurlTransfer] = []
            var cancelled: [CurlTransfer] = []
        }

        /// The multi handle; used on the engine's thread only, but for `curl_multi_wakeup`, which libcurl allows
        /// from any thread.
        private let multi: Handle
        private let inbox = Mutex(Inbox())

        /// A libcurl handle as a value that may cross threads (see each use for who touches it).
        struct Handle: @unchecked Sendable {
            let pointer: UnsafeMutableRawPointer
        }

        init(maximumConnectionsPerHost: Int) {
            Self.initialiseOnce
            multi = Handle(pointer: curl_multi_init()!)
            filmstrip_curl_multi_set_long(
                multi.pointer, CURLMOPT_MAX_HOST_CONNECTIONS, max(1, maximumConnectionsPerHost))
            filmstrip_curl_multi_set_long(multi.pointer, CURLMOPT_MAXCONNECTS, 64)
            // The thread keeps the engine: transports are long-lived, shared objects.
            let thread = Thread { [self] in run() }
            thread.name = "filmstrip.curl"
            thread.start()
        }

        private static let initialiseOnce: Void = { curl_global_init(Int(CURL_GLOBAL_DEFAULT)) }()

        func add(_ transfer: CurlTransfer) {
            inbox.withLock { $0.added.append(transfer) }
            curl_multi_wakeup(multi.pointer)
        }

        func cancel(_ transfer: CurlTransfer) {
            inbox.withLock { $0.cancelled.append(transfer) }
            curl_multi_wakeup(multi.pointer)
        }

        /// The engine's loop; it runs as long as the process.
        private func run() {
            var running: [UnsafeMutableRawPointer: CurlTransfer] = [:]
            while true {
                let (added, cancelled) = inbox.withLock { inbox -> ([CurlTransfer], [CurlTransfer]) in
                    defer { inbox = Inbox() }
                    return (inbox.added, inbox.cancelled)
                }
                for transfer in added {
                    if let easy = transfer.begin() {
                        running[easy] = transfer
                        curl_multi_add_handle(multi.pointer, easy)
                    }
                }
                for transfer in cancelled {
                    transfer.fail(LoadingError(.cancelled, url: transfer.url, "the request was cancelled"))
                }
                var active: Int32 = 0
                curl_multi_perform(multi.pointer, &active)
                var left: Int32 = 0
                while let message = curl_multi_info_read(multi.pointer, &left) {
                    guard filmstrip_curl_message_done(message) != 0, let easy = filmstrip_curl_message_handle(message)
                    else { continue }
                    let result = filmstrip_curl_message_result(message)
                    if let transfer = running.removeValue(forKey: easy) {
                        curl_multi_remove_handle(multi.pointer, easy)
                        transfer.end(result)
                    }
                }
                // Timeouts, cancellations and refused bodies end a transfer here, between libcurl's calls.
                var wait = 1000.0
                let now = DispatchTime.now()
                for (easy, transfer) in running {
                    if let remaining = transfer.check(now) {
                        wait = min(wait, remaining * 1000)
                    } else {
                        running[easy] = nil
                        curl_multi_remove_handle(multi.pointer, easy)
                        transfer.end(nil)
                    }
                }
                curl_multi_poll(multi.pointer, nil, 0, Int32(max(1, wait.rounded(.up))), nil)
            }
        }
    }
#endif
