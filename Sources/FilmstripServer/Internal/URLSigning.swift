import Crypto
import Foundation
import _CryptoExtras

/// Signed image URLs, as Mux signs them: a JWT in the `token` parameter, signed with RS256 by a private key whose
/// public half the server holds under the token's `kid`; `sub` names the video, `aud` the kind of image (`t` a
/// thumbnail, `g` an animation, `s` a storyboard), `exp` when it stops working, and the image's parameters are
/// claims (the URL's own parameters beside a token are ignored).
struct URLSigning: Sendable {
    /// The kinds of image a token is for (`aud`).
    enum Audience: String, Sendable {
        case thumbnail = "t"
        case animated = "g"
        case storyboard = "s"
    }

    /// Why a request is refused (HTTP 403).
    struct Refusal: Error, Equatable {
        var message: String
        init(_ message: String) { self.message = message }
    }

    /// The image parameters a token may carry as claims.
    static let parameterClaims: Set<String> = [
        "time", "width", "height", "fit_mode", "flip_v", "flip_h", "rotate", "latest", "start", "end", "fps",
    ]

    let keys: [String: _RSA.Signing.PublicKey]
    /// Whether every image URL must carry a valid token.
    let required: Bool
    let now: @Sendable () -> Date

    /// Keys from PEM text by `kid` (a public key, or a certificate's key is not read: give the key itself).
    init(pems: [String: String], required: Bool, now: @escaping @Sendable () -> Date = { Date() }) throws {
        var keys: [String: _RSA.Signing.PublicKey] = [:]
        for (kid, pem) in pems {
            do {
                keys[kid] = try _RSA.Signing.PublicKey(pemRepresentation: pem)
            } catch {
                throw ServerError(
                    status: 500, "the signing key \(kid) is not an RSA public key in PEM", underlying: error)
            }
        }
        if required, keys.isEmpty {
            throw ServerError(status: 500, "signed URLs are required but no signing key is given")
        }
        self.keys = keys
        self.required = required
        self.now = now
    }

    /// What a signed URL is made with: the image's parameters, and when its token expires (seconds since 1970).
    struct Signed {
        var query: [(String, String)]
        var expires: Double?
    }

    /// The parameters an image URL is made with: the claims of its valid token (with its `exp`), or its own query
    /// when it has no token and none is required.
    func parameters(query: [(String, String)], id: String, audience: Audience) throws(Refusal) -> Signed {
        guard let token = query.first(where: { $0.0 == "token" })?.1 else {
            if required { throw Refusal("this image needs a signed URL (a token)") }
            return Signed(query: query, expires: nil)
        }
        guard !keys.isEmpty else { throw Refusal("this server checks no signed URLs") }
        return try verify(token, id: id, audience: audience)
    }

    /// The image parameters of a valid token for video `id` and `audience`, and its expiry.
    func verify(_ token: String, id: String, audience: Audience) throws(Refusal) -> Signed {
        let parts = token.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 3, let headerBytes = Self.base64URL(parts[0]), let payloadBytes = Self.base64URL(parts[1]),
            let signature = Self.base64URL(parts[2])
        else { throw Refusal("the token is not a JWT") }
        guard let header = Self.object(headerBytes), let payload = Self.object(payloadBytes) else {
            throw Refusal("the token's header or claims are not a JSON object")
        }
        guard case .string("RS256") = header["alg"] else { throw Refusal("the token must be signed with RS256") }
        guard case .string(let kid) = header["kid"], let key = keys[kid] else {
            throw Refusal("the token's kid names no signing key of this server")
        }
        let signed = Data((parts[0] + "." + parts[1]).utf8)
        guard
            key.isValidSignature(
                _RSA.Signing.RSASignature(rawRepresentation: signature), for: signed, padding: .insecurePKCS1v1_5)
        else { throw Refusal("the token's signature does not verify") }
        guard case .number(let exp) = payload["exp"] else { throw Refusal("the token has no exp") }
        guard exp > now().timeIntervalSince1970 else { throw Refusal("the token has expired") }
        guard case .string(audience.rawValue) = payload["aud"] else {
            throw Refusal("the token is not for this kind of image (aud must be \(audience.rawValue))")
        }
        guard case .string(let sub) = payload["sub"],
            (sub.removingPercentEncoding ?? sub) == (id.removingPercentEncoding ?? id)
        else { throw Refusal("the token is for another video") }
        var claims: [(String, String)] = []
        for (name, value) in payload.sorted(by: { $0.key < $1.key }) where Self.parameterClaims.contains(name) {
            switch value {
            case .string(let text): claims.append((name, text))
            case .bool(let flag): claims.append((name, flag ? "true" : "false"))
            case .number(let n): claims.append((name, n == n.rounded() && abs(n) < 1e15 ? String(Int64(n)) : String(n)))
            case .other: throw Refusal("the claim \(name) must be a string, a number or a boolean")
            }
        }
        return Signed(query: claims, expires: exp)
    }

    /// A JSON value as a token's header and claims hold them.
    enum Value: Decodable, Equatable {
        case string(String)
        case number(Double)
        case bool(Bool)
        case other

        init(from decoder: any Decoder) throws {
            let container = try decoder.singleValueContainer()
            if let flag = try? container.decode(Bool.self) {
                self = .bool(flag)
            } else if let number = try? container.decode(Double.self) {
                self = .number(number)
            } else if let text = try? container.decode(String.self) {
                self = .string(text)
            } else {
                self = .other
            }
        }
    }

    static func object(_ data: Data) -> [String: Value]? {
        try? JSONDecoder().decode([String: Value].self, from: data)
    }

    /// Base64url without padding (RFC 7515 section 2); `nil` for anything else.
    static func base64URL(_ text: Substring) -> Data? {
        guard text.utf8.allSatisfy({ $0.isASCIIAlphanumeric || $0 == UInt8(ascii: "-") || $0 == UInt8(ascii: "_") })
        else { return nil }
        var standard = text.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        while standard.count % 4 != 0 { standard += "=" }
        return Data(base64Encoded: standard)
    }
}

extension UInt8 {
    fileprivate var isASCIIAlphanumeric: Bool {
        (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(self) || (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(self)
            || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(self)
    }
}
