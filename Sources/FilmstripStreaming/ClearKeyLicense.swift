public import FilmstripLoading
import FilmstripSync
public import Foundation

#if canImport(FoundationNetworking)
    public import FoundationNetworking
#endif

/// Signs a licence request before it is sent (adds a header, changes the URL); throwing fails the licence.
public typealias LicenseRequestPreparation = @Sendable (inout URLRequest) async throws -> Void

/// A W3C ClearKey licence server (Encrypted Media Extensions, "Clear Key"): a POST of
/// `{"kids": [key ids, base64url], "type": "temporary"}` answered with a JSON Web Key set,
/// `{"keys": [{"kty": "oct", "kid": …, "k": …}]}`. The keys it gives are held in memory only.
public struct ClearKeyLicense: Sendable {
    /// The licence server.
    public var url: URL
    /// Headers sent with each request (the network configuration's, an authorisation token).
    public var headers: [String: String]
    /// The longest a request may take, in seconds (`timeoutIntervalForDrmAcquisitionMs`).
    public var timeout: Double
    /// Which addresses the request, and each redirect, may reach.
    public var addressPolicy: AddressPolicy
    /// Called with each request before it is sent, to sign it (add a header, change the URL).
    public var prepare: LicenseRequestPreparation?

    public init(
        url: URL, headers: [String: String] = [:], timeout: Double = 10, addressPolicy: AddressPolicy = .any,
        prepare: LicenseRequestPreparation? = nil
    ) {
        self.url = url
        self.headers = headers
        self.timeout = timeout
        self.addressPolicy = addressPolicy
        self.prepare = prepare
    }

    /// Why a licence was not had.
    public struct Failure: Error, Sendable, Equatable, CustomStringConvertible {
        public enum Kind: String, Sendable {
            /// The server answered with an HTTP error (403: not entitled).
            case status
            /// No answer within the timeout.
            case timedOut
            /// The server could not be reached, or its address is not allowed.
            case unreachable
            /// The answer is not a JSON Web Key set.
            case malformed
            /// The answer holds no key for a key id asked for.
            case missingKey
        }

        public var kind: Kind
        public var message: String
        /// The HTTP status, for ``Kind/status``.
        public var status: Int?

        public init(_ kind: Kind, _ message: String, status: Int? = nil) {
            self.kind = kind
            self.message = message
            self.status = status
        }

        public var description: String { message }
    }

    /// The keys for `kids` (16 bytes each).
    public func keys(for kids: [Data]) async throws(Failure) -> ContentKeys {
        guard ["http", "https"].contains(url.scheme?.lowercased() ?? ""), let host = url.host else {
            throw Failure(.unreachable, "the licence URL is not http or https: \(url.absoluteString.prefix(200))")
        }
        if let refusal = addressPolicy.refusal(host: host) {
            throw Failure(.unreachable, "the licence server's address is not allowed: \(refusal)")
        }
        var request = URLRequest(url: url, cachePolicy: .reloadIgnoringLocalCacheData, timeoutInterval: timeout)
        request.httpMethod = "POST"
        request.setValue("application/json", forHTTPHeaderField: "Content-Type")
        for (name, value) in headers { request.setValue(value, forHTTPHeaderField: name) }
        request.httpBody = Self.requestBody(kids)
        if let prepare {
            do {
                try await prepare(&request)
            } catch {
                throw Failure(.unreachable, "the licence request could not be signed: \(error)")
            }
        }
        let (data, status) = try await send(request)
        guard (200..<300).contains(status) else {
            throw Failure(.status, "the licence server answered HTTP \(status)", status: status)
        }
        let keys = try Self.parse(data)
        for kid in kids where keys.key(for: kid) == nil {
            throw Failure(.missingKey, "the licence holds no key for key id \(ContentKeys.hex(kid))")
        }
        return keys
    }

    /// The request's JSON: the key ids in base64url without padding.
    static func requestBody(_ kids: [Data]) -> Data {
        let list = kids.map { "\"\(base64url($0))\"" }.joined(separator: ",")
        return Data("{\"kids\":[\(list)],\"type\":\"temporary\"}".utf8)
    }

    /// The keys of a JSON Web Key set (`kty` `oct`, `kid` and `k` in base64url), at most 64 KiB.
    static func parse(_ data: Data) throws(Failure) -> ContentKeys {
        guard data.count <= 64 << 10,
            let object = try? JSONSerialization.jsonObject(with: data) as? [String: Any],
            let list = object["keys"] as? [[String: Any]]
        else { throw Failure(.malformed, "the licence is not a JSON Web Key set") }
        var keys: [Data: Data] = [:]
        for entry in list.prefix(1000) {
            guard entry["kty"] as? String == "oct", let kid = (entry["kid"] as? String).flatMap(fromBase64url),
                let key = (entry["k"] as? String).flatMap(fromBase64url), kid.count == 16, key.count == 16
            else { throw Failure(.malformed, "a key of the licence is not a 16-byte oct key with its key id") }
            keys[kid] = key
        }
        return ContentKeys(keys)
    }

    /// Bytes in base64url without padding (RFC 7515), as ClearKey writes key ids and keys.
    public static func base64url(_ data: Data) -> String {
        data.base64EncodedString().replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
    }

    /// Bytes from base64url, with or without padding.
    public static func fromBase64url(_ text: String) -> Data? {
        var base64 = text.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        while base64.count % 4 != 0 { base64 += "=" }
        return Data(base64Encoded: base64)
    }

    private func send(_ request: URLRequest) async throws(Failure) -> (Data, Int) {
        let configuration = URLSessionConfiguration.ephemeral
        // The deadline below is the licence's timeout; the session's own (whole seconds on some platforms) only
        // backs it up.
        configuration.timeoutIntervalForRequest = timeout + 5
        configuration.timeoutIntervalForResource = timeout + 5
        let guardian = RedirectGuard(policy: addressPolicy)
        let session = URLSession(configuration: configuration, delegate: guardian, delegateQueue: nil)
        defer { session.finishTasksAndInvalidate() }
        let late = Mutex(false)
        let timeout = self.timeout
        let result: Result<(Data, Int), Failure> = await withCheckedContinuation { continuation in
            let task = session.dataTask(with: request) { data, response, error in
                if late.withLock({ $0 }) {
                    continuation.resume(
                        returning: .failure(Failure(.timedOut, "the licence server did not answer within \(timeout) s"))
                    )
                } else if let error = error as? URLError {
                    continuation.resume(
                        returning: .failure(
                            error.code == .timedOut
                                ? Failure(.timedOut, "the licence server did not answer within \(timeout) s")
                                : Failure(.unreachable, "the licence server could not be reached: \(error.code)")))
                } else if let error {
                    continuation.resume(
                        returning: .failure(Failure(.unreachable, "the licence request failed: \(error)")))
                } else {
                    let status = (response as? HTTPURLResponse)?.statusCode ?? 0
                    continuation.resume(returning: .success((data ?? Data(), status)))
                }
            }
            DispatchQueue.global().asyncAfter(deadline: .now() + timeout) {
                late.withLock { $0 = true }
                task.cancel()
            }
            task.resume()
        }
        return try result.get()
    }
}

/// Follows a redirect of a licence request only to http(s) on an allowed address.
private final class RedirectGuard: NSObject, URLSessionTaskDelegate, Sendable {
    let policy: AddressPolicy

    init(policy: AddressPolicy) { self.policy = policy }

    func urlSession(
        _ session: URLSession, task: URLSessionTask, willPerformHTTPRedirection response: HTTPURLResponse,
        newRequest request: URLRequest, completionHandler: @escaping @Sendable (URLRequest?) -> Void
    ) {
        guard let url = request.url, ["http", "https"].contains(url.scheme?.lowercased() ?? ""),
            let host = url.host, policy.refusal(host: host) == nil
        else { return completionHandler(nil) }
        completionHandler(request)
    }
}
