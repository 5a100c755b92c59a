import Foundation

// Names of earlier releases, kept for one release so code written against them compiles (with
// a warning naming the new one).

extension ServiceActor {
    /// Renamed: it is a `send` whose body goes to a file, not the resumable download
    /// (``downloadFile(_:to:options:requestOptions:)``), which the old name was easy to mistake for.
    @available(*, deprecated, renamed: "send(_:writingBodyTo:append:options:)")
    public nonisolated(nonsending) func download(_ request: HTTPRequest, to file: URL, append: Bool = false,
                                                 options: RequestOptions = RequestOptions()) async throws -> HTTPResponse {
        try await send(request, writingBodyTo: file, append: append, options: options)
    }
}
