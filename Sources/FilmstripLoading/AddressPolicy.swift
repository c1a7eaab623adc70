import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Which addresses requests may reach. A server that fetches URLs its users give it (thumbnails of a pasted link,
/// a manifest to inspect) sets ``publicOnly`` so that no one can make it fetch from its own network.
public enum AddressPolicy: Sendable, Hashable {
    /// Any address (the default: apps and local tools fetch from their own networks).
    case any
    /// Only public unicast addresses. The host's addresses are resolved first, for the request and for every
    /// redirect, and the request is refused when any of them is loopback, link-local, private (RFC 1918, unique
    /// local), shared (100.64/10), unspecified, multicast, reserved or documentation space, or such an IPv4 address
    /// embedded in IPv6 (mapped, NAT64, 6to4).
    ///
    /// The check is made on the resolver's answer just before the connection; a DNS server that answers differently
    /// to the connection a moment later (rebinding) is not covered: pair the policy with an egress firewall where
    /// that matters.
    case publicOnly

    /// Why `host` may not be reached, or `nil` when it may (always `nil` under ``any``). Resolves the name, which
    /// blocks: call it off the cooperative pool.
    public func refusal(host: String) -> String? {
        guard self == .publicOnly else { return nil }
        let name = host.hasPrefix("[") && host.hasSuffix("]") ? String(host.dropFirst().dropLast()) : host
        let addresses = Self.resolve(name)
        guard !addresses.isEmpty else { return "'\(name)' does not resolve" }
        for address in addresses {
            guard let reason = Self.refusal(address) else { continue }
            let text = Self.text(address)
            return text == name ? "\(text) is \(reason)" : "'\(name)' resolves to \(text), \(reason)"
        }
        return nil
    }

    /// An address as bytes: 4 for IPv4, 16 for IPv6.
    static func refusal(_ address: [UInt8]) -> String? {
        if address.count == 4 { return refusal(ipv4: address) }
        guard address.count == 16 else { return "an unknown address family" }
        let a = address
        if a.allSatisfy({ $0 == 0 }) { return "the unspecified address" }
        if a[0..<15].allSatisfy({ $0 == 0 }) && a[15] == 1 { return "a loopback address" }
        if a[0] == 0xFE && a[1] & 0xC0 == 0x80 { return "a link-local address" }
        if a[0] & 0xFE == 0xFC { return "a unique local (private) address" }
        if a[0] == 0xFF { return "a multicast address" }
        if a[0] == 0xFE && a[1] & 0xC0 == 0xC0 { return "a site-local address" }
        if a[0..<10].allSatisfy({ $0 == 0 }) && a[10] == 0xFF && a[11] == 0xFF {
            return refusal(ipv4: Array(a[12..<16])).map { "an IPv4-mapped address of \($0)" }
        }
        if a[0..<12].allSatisfy({ $0 == 0 }) { return "an IPv4-compatible address" }
        if a[0] == 0x00 && a[1] == 0x64 && a[2] == 0xFF && a[3] == 0x9B {
            return refusal(ipv4: Array(a[12..<16])).map { "a NAT64 address of \($0)" }
        }
        if a[0] == 0x20 && a[1] == 0x02 { return refusal(ipv4: Array(a[2..<6])).map { "a 6to4 address of \($0)" } }
        if a[0] == 0x20 && a[1] == 0x01 && a[2] == 0x0D && a[3] == 0xB8 { return "a documentation address" }
        return nil
    }

    private static func refusal(ipv4 a: [UInt8]) -> String? {
        switch (a[0], a[1]) {
        case (0, _): return "an unspecified (0/8) address"
        case (10, _), (172, 16...31), (192, 168): return "a private address"
        case (100, 64...127): return "a shared (carrier-grade NAT) address"
        case (127, _): return "a loopback address"
        case (169, 254): return "a link-local address"
        case (192, 0) where a[2] == 0 || a[2] == 2: return "a reserved or documentation address"
        case (198, 18...19): return "a benchmarking address"
        case (198, 51) where a[2] == 100, (203, 0) where a[2] == 113: return "a documentation address"
        case (224...239, _): return "a multicast address"
        case (240...255, _): return "a reserved or broadcast address"
        default: return nil
        }
    }

    /// Every address `name` resolves to (or the literal itself).
    static func resolve(_ name: String) -> [[UInt8]] {
        var hints = addrinfo()
        hints.ai_family = AF_UNSPEC
        hints.ai_socktype = Int32(streamSocketType)
        var list: UnsafeMutablePointer<addrinfo>?
        guard getaddrinfo(name, nil, &hints, &list) == 0, let first = list else { return [] }
        defer { freeaddrinfo(first) }
        var out: [[UInt8]] = []
        var node: UnsafeMutablePointer<addrinfo>? = first
        while let info = node?.pointee {
            if let address = info.ai_addr {
                if info.ai_family == AF_INET {
                    address.withMemoryRebound(to: sockaddr_in.self, capacity: 1) {
                        out.append(withUnsafeBytes(of: $0.pointee.sin_addr) { Array($0) })
                    }
                } else if info.ai_family == AF_INET6 {
                    address.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) {
                        out.append(withUnsafeBytes(of: $0.pointee.sin6_addr) { Array($0) })
                    }
                }
            }
            node = info.ai_next
        }
        return out
    }

    private static func text(_ address: [UInt8]) -> String {
        if address.count == 4 { return address.map(String.init).joined(separator: ".") }
        return stride(from: 0, to: 16, by: 2).map {
            String(UInt16(address[$0]) << 8 | UInt16(address[$0 + 1]), radix: 16)
        }
        .joined(separator: ":")
    }
}

#if canImport(Glibc)
    private let streamSocketType = SOCK_STREAM.rawValue
#else
    private let streamSocketType = SOCK_STREAM
#endif
