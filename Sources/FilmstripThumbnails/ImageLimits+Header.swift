import FilmstripImaging

extension ImageLimits {
    /// Refuses an image whose header declares more pixels than the limit.
    func validateHeader(_ info: ImageInfo) throws(ImagingError) {
        guard info.width > 0, info.height > 0,
            info.width.multipliedReportingOverflow(by: info.height).partialValue <= maximumPixelCount
        else {
            throw ImagingError(
                .tooLarge, "the image is \(info.width)x\(info.height); the limit is \(maximumPixelCount) pixels")
        }
    }
}
