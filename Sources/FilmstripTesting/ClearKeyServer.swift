import FilmstripFormats
import FilmstripStreaming
import Foundation

/// A W3C ClearKey licence server on a ``LoopbackServer`` path: it reads `{"kids": [...], "type": ...}` and answers
/// the keys it holds for those ids as a JSON Web Key set, with `Access-Control-Allow-Origin: *` for pages. Its
/// faults (a 403, a delay, a hang) are the server's: `server.fail(path, with: [.status(403)])`, `.delay(s)`.
public enum ClearKeyServer {
    /// Serves licences for `keys` (key id to key, hexadecimal) at `path`; a body that is not a licence request gets
    /// 400.
    public static func serve(on server: LoopbackServer, at path: String = "/license", keys: [String: String]) {
        let table = Dictionary(
            uniqueKeysWithValues: keys.compactMap { kid, key in
                StreamProtection.keyID(kid).flatMap { k in StreamProtection.keyID(key).map { (k, $0) } }
            }
        )
        server.serve(path) { request in
            guard request.method == "POST",
                let object = try? JSONSerialization.jsonObject(with: Data(request.body)) as? [String: Any],
                let kids = object["kids"] as? [String]
            else { return (400, "text/plain", Array("not a ClearKey licence request\n".utf8)) }
            let found = kids.compactMap { text -> String? in
                guard let kid = ClearKeyLicense.fromBase64url(text), let key = table[kid] else { return nil }
                return
                    "{\"kty\":\"oct\",\"kid\":\"\(ClearKeyLicense.base64url(kid))\",\"k\":\"\(ClearKeyLicense.base64url(key))\"}"
            }
            let body = "{\"keys\":[\(found.joined(separator: ","))],\"type\":\"temporary\"}"
            return (200, "application/json", Array(body.utf8))
        }
    }

    /// The key ids a licence request asked for (hexadecimal).
    public static func askedKeyIDs(_ request: LoopbackServer.Request) -> [String] {
        guard let object = try? JSONSerialization.jsonObject(with: Data(request.body)) as? [String: Any],
            let kids = object["kids"] as? [String]
        else { return [] }
        return kids.compactMap(ClearKeyLicense.fromBase64url).map { $0.map { String(format: "%02x", $0) }.joined() }
    }
}
