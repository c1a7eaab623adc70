import Filmstrip
import Foundation

enum LookupBenchmark {
    static func run(_ fixture: BenchFixture) {
        let starts = (0..<BenchFixture.cueCount).map(Double.init)
        let index = ThumbnailIndex(starts: starts, ends: starts.map { $0 + 1 })
        // Pseudo-random times over the whole track, generated up front.
        var seed: UInt64 = 0x243F_6A88_85A3_08D3
        let times = (0..<4096).map { _ -> Double in
            seed = seed &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            return Double(seed >> 11) / Double(1 << 53) * Double(BenchFixture.cueCount)
        }
        print("Lookup over \(BenchFixture.cueCount) cues (random times)")
        for policy in ThumbnailLookupPolicy.allCases {
            var checksum = 0
            let rounds = 500
            let start = now()
            for _ in 0..<rounds {
                for t in times { checksum &+= index.lookup(t, policy: policy) ?? 0 }
            }
            let ns = Double(now() - start) / Double(rounds * times.count)
            print(
                "  \(policy.rawValue.padding(toLength: 12, withPad: " ", startingAt: 0)) \(format(ns, 1)) ns/op   (checksum \(checksum % 9973))"
            )
        }
        print("")
    }
}
