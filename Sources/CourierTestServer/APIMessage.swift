import Foundation
import HTTPTypes
import Hummingbird

/// An API request without HTTP framing: what the Notes API's core handles, from a route or a batch part.
struct APIRequest: Sendable {
    var method: String
    /// The path as received, percent-encoding intact.
    var rawPath: String
    var query: String
    var headers: [(String, String)]
    var body: Data

    func header(_ name: String) -> String? {
        headers.first { $0.0.lowercased() == name.lowercased() }?.1
    }

    func parameter(_ name: String) -> String? {
        for pair in query.split(separator: "&") {
            let parts = pair.split(separator: "=", maxSplits: 1).map {
                String($0).replacingOccurrences(of: "+", with: " ").removingPercentEncoding ?? String($0)
            }
            if parts.first == name { return parts.count > 1 ? parts[1] : "" }
        }
        return nil
    }
}

/// An API response without HTTP framing.
struct APIResponse: Sendable {
    var status: Int
    var headers: [(String, String)] = []
    var body = Data()

    var hummingbirdResponse: Response {
        var fields = HTTPFields()
        for (name, value) in headers {
            if let fieldName = HTTPField.Name(name) { fields.append(HTTPField(name: fieldName, value: value)) }
        }
        return Response(status: .init(code: status), headers: fields,
                        body: body.isEmpty ? ResponseBody() : ResponseBody(byteBuffer: ByteBuffer(bytes: body)))
    }
}

extension Response {
    init(_ apiResponse: APIResponse) {
        self = apiResponse.hummingbirdResponse
    }
}
