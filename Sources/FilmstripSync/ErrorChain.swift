/// An error that keeps the error beneath it as a value (a network failure under a streaming error under a player
/// error): a caller can inspect each cause, and the description prints the whole chain.
public protocol ChainedError: Error, CustomStringConvertible {
    /// The error this one wraps, if any.
    var cause: (any Error)? { get }
    /// What went wrong, in words.
    var message: String { get }
    /// What this error says of itself (its message, and where), without its causes.
    var headline: String { get }
}

extension ChainedError {
    /// The causes beneath this error, nearest first (at most 8, so a chain that loops ends).
    public var causes: [any Error] {
        var found: [any Error] = []
        var next = cause
        while let error = next, found.count < 8 {
            found.append(error)
            next = (error as? any ChainedError)?.cause
        }
        return found
    }

    /// The headline, then each cause whose message the text before it does not already quote:
    /// `headline; caused by: cause; caused by: its cause`.
    public var description: String { described(from: headline) }

    /// The message, then the causes as ``description`` prints them: the whole story without this error's own place,
    /// for records and events that keep the place apart.
    public var chainedMessage: String { described(from: message) }

    private func described(from start: String) -> String {
        var described = ErrorText.excerpt(start)
        for error in causes {
            let chained = error as? any ChainedError
            let message = ErrorText.excerpt(chained?.message ?? String(describing: error))
            guard !message.isEmpty, !described.contains(message) else { continue }
            described += "; caused by: " + ErrorText.excerpt(chained?.headline ?? message)
        }
        return described
    }
}

/// How errors quote what they found. What they found may be megabytes (an 8 MB attribute, a URL as long as the
/// manifest that named it): each part of a description keeps its first characters and says how much it left out.
public enum ErrorText {
    /// `text`, or its first `limit` characters and how many bytes were left out.
    public static func excerpt(_ text: String, limit: Int = 300) -> String {
        guard text.utf8.count > limit else { return text }
        let kept = text.prefix(limit)
        return kept + "… (\(text.utf8.count - kept.utf8.count) more bytes)"
    }
}
