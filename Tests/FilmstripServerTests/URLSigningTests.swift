import Crypto
import Foundation
import Testing
import _CryptoExtras

@testable import FilmstripServer

@Suite("Signed image URLs (RS256 JWTs)")
struct URLSigningTests {
    static let key = try! _RSA.Signing.PrivateKey(keySize: .bits2048)
    static let other = try! _RSA.Signing.PrivateKey(keySize: .bits2048)
    static let now = Date(timeIntervalSince1970: 1_900_000_000)

    static func base64URL(_ data: Data) -> String {
        data.base64EncodedString().replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
    }

    /// A token: `header` and `claims` as JSON text, signed by `signer` (RS256), or with `signature` as given.
    static func token(
        header: String = #"{"alg":"RS256","kid":"k1","typ":"JWT"}"#, claims: String,
        signer: _RSA.Signing.PrivateKey = key, signature: String? = nil
    ) throws -> String {
        let signed = base64URL(Data(header.utf8)) + "." + base64URL(Data(claims.utf8))
        let made = try signer.signature(for: Data(signed.utf8), padding: .insecurePKCS1v1_5).rawRepresentation
        return signed + "." + (signature ?? base64URL(made))
    }

    static func signing(required: Bool = true) throws -> URLSigning {
        try URLSigning(pems: ["k1": key.publicKey.pemRepresentation], required: required, now: { now })
    }

    static let good = #"{"sub":"shows/a%20b.mp4","aud":"t","exp":1900000060,"time":12.5,"width":320,"flip_h":true}"#

    @Test("a valid token gives its claims as the image's parameters; the URL's own are ignored")
    func valid() throws {
        let query = [("token", try Self.token(claims: Self.good)), ("width", "999"), ("time", "1")]
        let parameters = try Self.signing().parameters(query: query, id: "shows/a%20b.mp4", audience: .thumbnail)
        #expect(parameters.query.map { "\($0.0)=\($0.1)" } == ["flip_h=true", "time=12.5", "width=320"])
        #expect(parameters.expires == 1_900_000_060)
        // The id decoded the same way matches too.
        _ = try Self.signing().verify(try Self.token(claims: Self.good), id: "shows/a b.mp4", audience: .thumbnail)
    }

    @Test(
        "refused: unsigned, expired, tampered, wrong kid, wrong aud, another video, alg none or HS256, not a JWT",
        arguments: 0..<10)
    func refusals(_ kind: Int) throws {
        let signing = try Self.signing()
        var query: [(String, String)] = []
        switch kind {
        case 0: query = [("time", "1")]
        case 1:
            query = [
                ("token", try Self.token(claims: Self.good.replacingOccurrences(of: "1900000060", with: "1899999999")))
            ]
        case 2:
            let token = try Self.token(claims: Self.good)
            let parts = token.split(separator: ".")
            let claims = Self.base64URL(Data(Self.good.replacingOccurrences(of: "320", with: "3200").utf8))
            query = [("token", "\(parts[0]).\(claims).\(parts[2])")]
        case 3: query = [("token", try Self.token(header: #"{"alg":"RS256","kid":"k2"}"#, claims: Self.good))]
        case 4:
            query = [
                (
                    "token",
                    try Self.token(claims: Self.good.replacingOccurrences(of: #""aud":"t""#, with: #""aud":"g""#))
                )
            ]
        case 5: query = [("token", try Self.token(claims: Self.good.replacingOccurrences(of: "a%20b", with: "c")))]
        case 6:
            query = [("token", try Self.token(header: #"{"alg":"none","kid":"k1"}"#, claims: Self.good, signature: ""))]
        case 7: query = [("token", try Self.token(header: #"{"alg":"HS256","kid":"k1"}"#, claims: Self.good))]
        case 8: query = [("token", try Self.token(claims: Self.good, signer: Self.other))]
        default: query = [("token", "a.b")]
        }
        #expect(throws: URLSigning.Refusal.self) {
            try signing.parameters(query: query, id: "shows/a%20b.mp4", audience: .thumbnail)
        }
    }

    @Test("not required: an unsigned URL uses its own parameters; a bad token is still refused; keys must be RSA")
    func optional() throws {
        let signing = try Self.signing(required: false)
        let unsigned = try signing.parameters(query: [("time", "1")], id: "x", audience: .thumbnail)
        #expect(unsigned.query.count == 1 && unsigned.expires == nil)
        #expect(throws: URLSigning.Refusal.self) {
            try signing.parameters(query: [("token", "x.y.z")], id: "x", audience: .thumbnail)
        }
        #expect(throws: ServerError.self) { try URLSigning(pems: ["k": "not a key"], required: false) }
        #expect(throws: ServerError.self) { try URLSigning(pems: [:], required: true) }
    }
}
