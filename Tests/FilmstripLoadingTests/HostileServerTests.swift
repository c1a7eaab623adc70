import FilmstripTesting
import Foundation
import Testing

@testable import FilmstripLoading

/// Servers and URLs that try to make a fetcher misbehave: bodies that never end or drip, headers that would split a
/// request, and (under the address policy) addresses inside the fetcher's own network.
@Suite("Hostile servers and URLs")
struct HostileServerTests {
    let server: LoopbackServer

    init() throws {
        server = try LoopbackServer()
        server.serve("/ok.bin", body: Array("fine".utf8))
    }

    func load(_ url: URL, _ configuration: LoadingConfiguration = fastRetries(1)) async -> LoadingError? {
        await loadingError { _ = try await URLSessionDataLoader().load(url, configuration: configuration) }
    }

    @Test("a header value with CR or LF is refused before anything is sent")
    func headerInjection() async {
        for bad in ["a\r\nX-Injected: 1", "a\nb", "a\rb", "a\u{0}b"] {
            var configuration = fastRetries(1)
            configuration.additionalHeaders = ["X-Token": bad]
            #expect(await load(server.url("/ok.bin"), configuration)?.kind == .refused)
            configuration.additionalHeaders = [bad: "1"]
            #expect(await load(server.url("/ok.bin"), configuration)?.kind == .refused)
        }
        #expect(server.requests.isEmpty)
    }

    @Test("a never-ending body stops at the size limit; a slow drip stops at the resource timeout")
    func endlessAndDrip() async {
        server.fail("/endless", with: [.endless])
        var limited = fastRetries(1)
        limited.maximumResponseSize = 1 << 20
        #expect(await load(server.url("/endless"), limited)?.kind == .tooLarge(limit: 1 << 20))
        server.serve("/drip.bin", body: [UInt8](repeating: 7, count: 100_000))
        server.fail("/drip.bin", with: [.throttle(bytesPerSecond: 2_000)])
        var impatient = fastRetries(1)
        impatient.resourceTimeout = 1
        let started = Date()
        #expect(await load(server.url("/drip.bin"), impatient)?.kind == .timedOut)
        #expect(Date().timeIntervalSince(started) < 10)
    }

    @Test(
        "publicOnly refuses loopback, private, link-local and metadata addresses before connecting",
        arguments: [
            "127.0.0.1", "localhost", "10.1.2.3", "172.16.0.1", "192.168.1.1", "169.254.169.254", "100.64.0.1",
            "0.0.0.0", "[::1]", "[fe80::1]", "[fd00::1]", "[::ffff:127.0.0.1]", "224.0.0.1",
        ])
    func privateAddresses(host: String) async throws {
        var configuration = fastRetries(1)
        configuration.addressPolicy = .publicOnly
        let url = try #require(URL(string: "http://\(host):\(server.port)/ok.bin"))
        let error = await load(url, configuration)
        #expect(error?.kind == .refused, "\(String(describing: error))")
        #expect(server.requests.isEmpty)
    }

    @Test("the policy's address classes: public unicast passes, everything internal is named")
    func addressClasses() {
        func v6(_ text: String) -> [UInt8] {
            var address = in6_addr()
            _ = inet_pton(AF_INET6, text, &address)
            return withUnsafeBytes(of: address) { Array($0) }
        }
        #expect(AddressPolicy.refusal([8, 8, 8, 8]) == nil)
        #expect(AddressPolicy.refusal([1, 1, 1, 1]) == nil)
        #expect(AddressPolicy.refusal(v6("2606:4700:4700::1111")) == nil)
        #expect(AddressPolicy.refusal([172, 32, 0, 1]) == nil, "172.32/16 is outside 172.16/12")
        #expect(AddressPolicy.refusal([172, 31, 255, 255]) != nil)
        #expect(AddressPolicy.refusal(v6("64:ff9b::a00:1")) != nil, "NAT64 of 10.0.0.1")
        #expect(AddressPolicy.refusal(v6("2002:c0a8:0101::1")) != nil, "6to4 of 192.168.1.1")
        #expect(AddressPolicy.refusal(v6("2001:db8::1")) != nil)
        #expect(AddressPolicy.any.refusal(host: "127.0.0.1") == nil)
    }

    @Test("a local track's image that is a device or FIFO is refused, not read forever")
    func devices() async {
        let loader = ResourceLoader(configuration: fastRetries(1))
        let error = await loadingError { _ = try await loader.data(for: URL(fileURLWithPath: "/dev/zero")) }
        #expect(error?.kind == .fileUnreadable)
    }
}
