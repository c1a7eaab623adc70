// The structure-aware half of `make fuzz`'s mutations for the text formats: ``TextMutation`` (compiled in from
// Sources/FilmstripTesting) works on lines and numbers; the other half are libFuzzer's own byte mutations, which
// also use Fuzz/boundary.dict.

@_silgen_name("LLVMFuzzerMutate")
func libFuzzerMutate(_ data: UnsafeMutablePointer<UInt8>?, _ size: Int, _ maxSize: Int) -> Int

enum StructureMutator {
    /// Mutates `data` in place (at most `maxSize` bytes); returns the new size.
    static func mutate(_ data: UnsafeMutablePointer<UInt8>, size: Int, maxSize: Int, seed: UInt32) -> Int {
        var random = FuzzRandom(state: UInt64(seed) &* 0x9E37_79B9_7F4A_7C15 &+ 1)
        guard random.next() % 2 == 0 else { return libFuzzerMutate(data, size, maxSize) }
        let mutated = TextMutation.mutate(Array(UnsafeBufferPointer(start: data, count: size)), using: &random)
        let count = min(mutated.count, maxSize)
        mutated.withUnsafeBufferPointer { data.update(from: $0.baseAddress!, count: count) }
        return count
    }
}

/// SplitMix64 from libFuzzer's seed: the same seed gives the same mutation, as libFuzzer expects.
struct FuzzRandom: RandomNumberGenerator {
    var state: UInt64
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
