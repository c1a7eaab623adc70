import FilmstripImaging
import Foundation
import Testing

@testable import FilmstripServer

@Suite("Image URLs: parameters and rendering")
struct ImageParametersTests {
    static func read(_ query: [(String, String)]) throws(ImageParameters.Problem) -> ImageParameters {
        try ImageParameters(format: .jpeg, query: query)
    }

    @Test("each parameter as Mux documents it; the first of a name given twice counts")
    func reading() throws {
        let p = try Self.read([
            ("time", "12.5"), ("width", "320"), ("height", "180"), ("fit_mode", "smartcrop"), ("flip_v", "true"),
            ("flip_h", "false"), ("rotate", "270"), ("width", "99"), ("unknown", "x"),
        ])
        #expect(p.time == 12.5 && p.width == 320 && p.height == 180 && p.fitMode == .smartcrop)
        #expect(p.flipVertical && !p.flipHorizontal && p.quarterTurns == 3 && !p.latest)
        let plain = try Self.read([])
        #expect(plain.time == nil && plain.width == nil && plain.fitMode == .preserve && plain.quarterTurns == 0)
        // One spelling per image: the cache key and the ETag do not depend on how the query was written.
        #expect(
            try Self.read([("time", "2.50"), ("width", "120")]).canonical
                == Self.read([("width", "120"), ("time", "2.5")]).canonical)
        #expect(
            try Self.read([("time", "2.5")]).canonical != Self.read([("time", "2.5"), ("flip_h", "true")]).canonical)
    }

    @Test(
        "a bad value is named, never clamped",
        arguments: [
            ("time", "NaN"), ("time", "-1"), ("time", "inf"), ("time", "1e300"), ("width", "1e9"), ("width", "0"),
            ("width", "3841"), ("width", "12.5"), ("height", "-4"), ("fit_mode", "zoom"), ("flip_v", "1"),
            ("rotate", "45"), ("rotate", "-90"), ("rotate", "0"), ("latest", "yes"),
        ])
    func refusals(_ parameter: (String, String)) {
        #expect(throws: ImageParameters.Problem.self) { try Self.read([parameter]) }
        do {
            _ = try Self.read([parameter])
        } catch {
            #expect(error.messages.count == 1 && error.messages[0].hasPrefix(parameter.0), "\(error.messages)")
        }
    }

    /// A 40 x 20 picture: the left half red, the right half blue; the top-left pixel white.
    static func picture() -> PixelBuffer {
        var image = PixelBuffer(width: 40, height: 20)
        for y in 0..<20 {
            for x in 0..<40 {
                let i = (y * 40 + x) * 3
                image.bytes[i] = x < 20 ? 220 : 10
                image.bytes[i + 2] = x < 20 ? 10 : 220
            }
        }
        image.bytes[0...2] = [255, 255, 255]
        return image
    }

    static func render(_ query: [(String, String)]) throws -> PixelBuffer {
        try ImageRendering.render(picture(), try read(query))
    }

    @Test("a clockwise turn, then flips, then the size")
    func orientation() throws {
        #expect(try Self.render([("flip_h", "true")]).pixel(x: 39, y: 0).0 == 255)
        #expect(try Self.render([("flip_v", "true")]).pixel(x: 0, y: 19).0 == 255)
        let turned = try Self.render([("rotate", "90")])
        #expect(turned.width == 20 && turned.height == 40 && turned.pixel(x: 19, y: 0).0 == 255)
        #expect(try Self.render([("rotate", "180")]).pixel(x: 39, y: 19).0 == 255)
        #expect(try Self.render([("rotate", "270")]).pixel(x: 0, y: 39).0 == 255)
        // Flips come after the turn, as Mux makes them: the corner a quarter turn takes to the top right, mirrored
        // back to the top left.
        let both = try Self.render([("rotate", "90"), ("flip_h", "true")])
        #expect(both.width == 20 && both.pixel(x: 0, y: 0).0 == 255)
        let sized = try Self.render([("rotate", "90"), ("width", "10")])
        #expect(sized.width == 10 && sized.height == 20)
    }

    @Test("sizes: one side keeps the aspect ratio; a box by fit mode")
    func sizes() throws {
        func size(_ query: [(String, String)]) throws -> [Int] {
            let image = try Self.render(query)
            return [image.width, image.height]
        }
        #expect(try size([]) == [40, 20])
        #expect(try size([("width", "80")]) == [80, 40])
        #expect(try size([("height", "5")]) == [10, 5])
        #expect(try size([("width", "30"), ("height", "30")]) == [30, 15])
        for mode in ["stretch", "crop", "smartcrop", "pad"] {
            #expect(try size([("width", "30"), ("height", "30"), ("fit_mode", mode)]) == [30, 30], "\(mode)")
        }
        let padded = try Self.render([("width", "30"), ("height", "30"), ("fit_mode", "pad")])
        #expect(padded.pixel(x: 15, y: 2) == (0, 0, 0, 255) && padded.pixel(x: 15, y: 27) == (0, 0, 0, 255))
        let cropped = try Self.render([("width", "20"), ("height", "20"), ("fit_mode", "crop")])
        #expect(cropped.pixel(x: 0, y: 10).0 > 200 && cropped.pixel(x: 19, y: 10).2 > 200, "the centre, both halves")
    }

    @Test("smartcrop keeps the part with detail; crop keeps the centre")
    func smartcrop() throws {
        // 60 x 20: flat on the left two thirds, a checker on the right third.
        var image = PixelBuffer(width: 60, height: 20, fill: (128, 128, 128, 255))
        for y in 0..<20 {
            for x in 40..<60 where (x / 2 + y / 2) % 2 == 0 {
                image.bytes.replaceSubrange(((y * 60 + x) * 3)..<((y * 60 + x) * 3 + 3), with: [255, 255, 255])
            }
        }
        let box = try Self.read([("width", "20"), ("height", "20"), ("fit_mode", "smartcrop")])
        let smart = try ImageRendering.render(image, box)
        // The cut holds the checker: it starts at its first column, or one before (the edge there is detail too).
        #expect((0..<20).contains { smart.pixel(x: 1, y: $0).0 == 255 }, "the cut holds the checker")
        var centred = box
        centred.fitMode = .crop
        let crop = try ImageRendering.render(image, centred)
        #expect((0..<20).allSatisfy { crop.pixel(x: 10, y: $0).0 == 128 }, "the centre is flat")
    }

    @Test("animations: Mux's defaults, frame times to the video's end, sizes within 640")
    func animation() throws {
        let plain = try AnimationParameters(format: .gif, query: [])
        #expect(plain.start == 0 && plain.end == nil && plain.fps == 15)
        // 0 to 5 s at 15 a second; a 4 s video: to its end.
        #expect(try plain.times(duration: 60).count == 75)
        #expect(try plain.times(duration: 4) == (0..<60).map { Double($0) / 15 })
        let run = try AnimationParameters(
            format: .webp, query: [("start", "2"), ("end", "3"), ("fps", "4"), ("width", "200")])
        #expect(try run.times(duration: 60) == [2, 2.25, 2.5, 2.75])
        #expect(throws: ImageParameters.Problem.self) { try run.times(duration: 2) }
        #expect(plain.frameSize(of: (1920, 1080)) == (320, 180))
        #expect(run.frameSize(of: (1920, 1080)) == (200, 113))
        let box = try AnimationParameters(format: .gif, query: [("width", "640"), ("height", "100")])
        #expect(box.frameSize(of: (1920, 1080)) == (178, 100))
        let tall = try AnimationParameters(format: .gif, query: [("width", "640")])
        #expect(tall.frameSize(of: (1080, 1920)) == (360, 640))
        for query in [("fps", "31"), ("fps", "0"), ("end", "10.5"), ("start", "-1"), ("width", "641"), ("end", "inf")] {
            #expect(throws: ImageParameters.Problem.self, "\(query)") {
                try AnimationParameters(format: .gif, query: [query])
            }
        }
        #expect(
            try AnimationParameters(format: .gif, query: [("start", "1"), ("end", "1.5")]).canonical
                == AnimationParameters(format: .gif, query: [("end", "1.50"), ("start", "1.0")]).canonical)
    }

    @Test("the decoder's scaler makes the size the rendering needs: the box when fitting inside it, turned")
    func decodeBox() throws {
        #expect(try Self.read([("width", "320")]).decodeBox == (320, 3840))
        #expect(try Self.read([("height", "90"), ("rotate", "90")]).decodeBox == (90, 3840))
        #expect(try Self.read([("width", "300"), ("height", "100")]).decodeBox == (300, 100))
        #expect(try Self.read([("width", "300"), ("height", "100"), ("fit_mode", "pad")]).decodeBox == (300, 100))
        // A cut or a stretch needs more of one side than the box: the whole picture.
        for mode in ["crop", "smartcrop", "stretch"] {
            #expect(try Self.read([("width", "300"), ("height", "100"), ("fit_mode", mode)]).decodeBox == (3840, 3840))
        }
        #expect(try Self.read([]).decodeBox == (3840, 3840))
    }
}
