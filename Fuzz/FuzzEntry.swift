// The libFuzzer entry points of `make fuzz` (Scripts/fuzz.sh). This file is compiled only there, with FilmstripFormats'
// sources and Tests/FilmstripFormatsTests/Fuzzing into one module; the target is chosen by FILMSTRIP_FUZZ_TARGET.
import Foundation

nonisolated(unsafe) private var target = FuzzTarget.webvtt

@_cdecl("LLVMFuzzerInitialize")
public func fuzzerInitialize(
    _ argc: UnsafeMutablePointer<CInt>?,
    _ argv: UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?>?
) -> CInt {
    let environment = ProcessInfo.processInfo.environment
    guard let chosen = FuzzTarget(rawValue: environment["FILMSTRIP_FUZZ_TARGET"] ?? "") else {
        let names = FuzzTarget.allCases.map(\.rawValue).joined(separator: " ")
        FileHandle.standardError.write(Data("set FILMSTRIP_FUZZ_TARGET to one of: \(names)\n".utf8))
        exit(2)
    }
    target = chosen
    // Writes the target's seeds (fixtures and writer output) into a directory first.
    if let directory = environment["FILMSTRIP_FUZZ_SEEDS"] {
        for (k, seed) in chosen.seeds.enumerated() {
            try? seed.write(to: URL(fileURLWithPath: directory).appendingPathComponent("seed-\(k)"))
        }
    }
    return 0
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzerTestOneInput(_ bytes: UnsafePointer<UInt8>?, _ count: Int) -> CInt {
    let input = bytes.map { Data(bytes: $0, count: count) } ?? Data()
    if let problem = target.run(input) { fatalError("\(target.rawValue): \(problem)") }
    return 0
}

/// The text formats get line- and number-aware mutations half of the time (see ``StructureMutator``).
@_cdecl("LLVMFuzzerCustomMutator")
public func fuzzerCustomMutator(
    _ data: UnsafeMutablePointer<UInt8>?, _ size: Int, _ maxSize: Int, _ seed: CUnsignedInt
) -> Int {
    guard let data else { return 0 }
    switch target {
    case .hls, .mpd, .webvtt, .storyboard, .cmcd, .cmcdRoundTrip, .grid:
        return StructureMutator.mutate(data, size: size, maxSize: maxSize, seed: seed)
    case .fragment, .bif, .sidx, .iFrameImages, .transportStream, .codecString:
        return libFuzzerMutate(data, size, maxSize)
    }
}
