import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

extension HTTPRequest {
    /// This request as Foundation's `URLRequest`, for sending it with another client (see
    /// ``ServiceActor/request(for:)``). Bodies in memory or in files are read into `httpBody`; a
    /// streamed body cannot be, and throws ``TransportError/invalidRequest``.
    public func makeURLRequest() throws -> URLRequest {
        var urlRequest = URLRequest(url: url)
        urlRequest.httpMethod = method.rawValue
        for field in headers { urlRequest.addValue(field.value, forHTTPHeaderField: field.name) }
        if let total = timeouts.total { urlRequest.timeoutInterval = Double(total.milliseconds) / 1000 }
        switch body.storage {
        case .empty:
            break
        case .data(let data):
            urlRequest.httpBody = data
        case .file(let file, let range):
            urlRequest.httpBody = try Self.read(file, range: range)
        case .parts(let parts):
            var data = Data()
            for part in parts {
                switch part {
                case .data(let bytes): data.append(bytes)
                case .file(let file, let range): data.append(try Self.read(file, range: range))
                }
            }
            urlRequest.httpBody = data
        case .stream:
            throw TransportError(.invalidRequest, message: "a streamed body cannot become a URLRequest's httpBody")
        }
        return urlRequest
    }

    private static func read(_ file: URL, range: Range<Int64>?) throws -> Data {
        if let range, HTTPRequest.Body.length(of: range) == nil {
            throw TransportError(.fileError, message: "bytes \(range) are outside \(file.path)")
        }
        do {
            let handle = try FileHandle(forReadingFrom: file)
            defer { try? handle.close() }
            guard let range, let length = HTTPRequest.Body.length(of: range) else { return try handle.readToEnd() ?? Data() }
            try handle.seek(toOffset: UInt64(range.lowerBound))
            return try handle.read(upToCount: Int(length)) ?? Data()
        } catch {
            throw TransportError(.fileError, message: "cannot read \(file.path): \(error)")
        }
    }
}
