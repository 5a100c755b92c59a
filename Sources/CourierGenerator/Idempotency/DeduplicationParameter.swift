import Foundation

/// Finds a method's deduplication parameter: a request ID the server uses to recognise a repeated
/// request and ignore it (AIP-155), as Compute Engine's `requestId` is. Google's Discovery
/// documents carry no annotation for it (the protos' `UUID4` field format and AIP-4235's
/// auto-populated fields do not reach them), so the generator reads the parameter's own
/// description, where the API's owner says what the server does with a repeat.
///
/// Across the 611 documents of google-api-python-client 2.x, 3,104 methods of 105 APIs take a
/// `requestId`; the rule below finds it in the writes whose descriptions say a repeat is ignored,
/// deduplicated or makes the request idempotent, and leaves those that say nothing of the kind
/// ("An optional request ID to identify requests.", "Request ID used for debugging."), numeric
/// IDs, and those idempotent only together with another parameter.
enum DeduplicationParameter {
    /// The one parameter name AIP-155 gives a request ID in Discovery documents.
    static let name = "requestId"

    /// Words by which a description says the server ignores a repeat of the same ID.
    static let declarations = [
        "ignore", "duplicat", "de-dup", "dedup", "idempoten", "only a single", "previous result will be returned",
    ]

    /// `requestId` when `method` writes and the description of its string query parameter of that
    /// name declares that the server deduplicates by it; nil otherwise.
    static func find(in method: DiscoveryMethod) -> String? {
        guard !["GET", "HEAD"].contains(method.httpMethod.uppercased()),
              let parameter = method.parameters?[name], parameter.location == "query",
              parameter.type == "string", parameter.format == nil, parameter.repeated != true,
              let description = parameter.description else { return nil }
        return declaresDeduplication(description) ? name : nil
    }

    /// Whether `description` says that the server ignores a request that repeats an ID, and
    /// makes no other parameter a condition of it ("only idempotent if both `request_id` and
    /// `session_id` are provided").
    static func declaresDeduplication(_ description: String) -> Bool {
        let text = description.lowercased().split(whereSeparator: \.isWhitespace).joined(separator: " ")
        guard declarations.contains(where: text.contains) else { return false }
        return !text.contains("if both") && !text.contains("used for debugging")
    }
}
