import Foundation
import Testing

@testable import FilmstripFormats

/// What `make fuzz` found stays fixed: every input kept in `Fuzzing/Regressions/<target>/` (each one crashed a
/// parser once), every seed, and a few thousand deterministic mutations of the seeds run through the same targets.
@Suite("Fuzz targets: regressions, seeds and mutations")
struct FuzzRegressionTests {
    static let regressions = FuzzTarget.root.appendingPathComponent("Tests/FilmstripFormatsTests/Fuzzing/Regressions")

    @Test("every input the fuzzer found a crash with is handled", arguments: FuzzTarget.allCases)
    func regressions(target: FuzzTarget) throws {
        let directory = Self.regressions.appendingPathComponent(target.rawValue)
        let files = (try? FileManager.default.contentsOfDirectory(at: directory, includingPropertiesForKeys: nil)) ?? []
        for file in files {
            #expect(target.run(try Data(contentsOf: file)) == nil, "\(file.lastPathComponent)")
        }
    }

    @Test("the seeds come from the fixtures and pass", arguments: FuzzTarget.allCases)
    func seeds(target: FuzzTarget) {
        let seeds = target.seeds
        // The fixture-backed corpora: the WPT WebVTT cases, the conformance and test-source playlists and MPDs.
        let least = ["webvtt": 15, "hls": 8, "mpd": 8, "storyboard": 2][target.rawValue] ?? 1
        #expect(seeds.count >= least, "\(seeds.count) seeds")
        for (k, seed) in seeds.enumerated() { #expect(target.run(seed) == nil, "seed \(k)") }
    }

    @Test(
        "mutated seeds (flips, cuts, splices, absurd numbers) never crash or break an invariant",
        arguments: FuzzTarget.allCases)
    func mutations(target: FuzzTarget) {
        let seeds = target.seeds.map(Array.init)
        var random = RobustnessTests.Generator(state: 0x5EED_0000 &+ UInt64(target.rawValue.utf8.count))
        let tokens = [
            "-1", "0", "4294967295", "18446744073709551616", "1e308", "NaN", "\"", "\\", ",", "=", "\n",
            "\r\n", "&#38;", "<!ENTITY", "x", "-->", "#EXTINF:", "#EXT-X-BYTERANGE:", "%", "\u{0}",
        ]
        .map { Array($0.utf8) }
        for round in 0..<1500 {
            var bytes = seeds[round % seeds.count]
            for _ in 0..<Int.random(in: 1...6, using: &random) {
                let at = bytes.isEmpty ? 0 : Int.random(in: 0..<bytes.count, using: &random)
                switch Int.random(in: 0..<6, using: &random) {
                case 0 where !bytes.isEmpty: bytes[at] ^= UInt8(1) << UInt8.random(in: 0..<8, using: &random)
                case 1: bytes.insert(contentsOf: tokens.randomElement(using: &random)!, at: at)
                case 2: bytes.removeSubrange(at..<min(bytes.count, at + Int.random(in: 1...16, using: &random)))
                case 3: bytes = Array(bytes.prefix(at))
                case 4 where !bytes.isEmpty:
                    let end = min(bytes.count, at + Int.random(in: 1...64, using: &random))
                    bytes.insert(contentsOf: bytes[at..<end], at: at)
                default: if !bytes.isEmpty { bytes[at] = UInt8.random(in: 0...255, using: &random) }
                }
            }
            let problem = target.run(Data(bytes))
            #expect(problem == nil, "round \(round): \(problem ?? "")")
        }
    }
}
