@testable import Courier
import Foundation
import Testing

/// How a query's method class (``MethodIdempotency``) becomes its requests' ``Idempotency``.
@Suite struct QueryIdempotencyTests {
    static let api = APIDescription(name: "storage", version: "v1", rootURL: URL(string: "https://storage.example/")!,
                                    servicePath: "storage/v1/")

    static func query(_ method: HTTPMethod, _ idempotency: MethodIdempotency?) -> Query<NoContent> {
        var query = Query<NoContent>(api: api, name: "storage.objects.delete", method: method, path: "b/{bucket}/o/{object}",
                                     pathParameters: ["bucket": "b", "object": "o"])
        query.methodIdempotency = idempotency
        return query
    }

    static func built(_ query: Query<NoContent>) throws -> HTTPRequest {
        try RequestBuilder.build(query, configuration: ServiceActor.Configuration())
    }

    @Test func withoutAClassHTTPsRuleHolds() throws {
        #expect(try Self.built(Self.query(.delete, nil)).isIdempotent)
        #expect(try !Self.built(Self.query(.post, nil)).isIdempotent)
    }

    @Test func theClassOverridesTheHTTPMethod() throws {
        #expect(try Self.built(Self.query(.post, .idempotent)).isIdempotent)
        #expect(try !Self.built(Self.query(.delete, .nonIdempotent)).isIdempotent)
        #expect(try !Self.built(Self.query(.get, .nonIdempotent)).isIdempotent)
    }

    @Test func aConditionalClassNeedsOneOfItsPreconditions() throws {
        let conditional = MethodIdempotency.conditional(parameters: ["ifGenerationMatch", "generation"], bodyFields: ["etag"])
        var query = Self.query(.delete, conditional)
        #expect(try !Self.built(query).isIdempotent, "a DELETE without its precondition is not re-sent")
        query.parameters.set("ifGenerationMatch", 0 as Int64)
        #expect(try Self.built(query).isIdempotent, "ifGenerationMatch=0 is a precondition (the object must not exist)")

        query = Self.query(.delete, conditional)
        query.parameters.set("generation", 7 as Int64)
        #expect(try Self.built(query).isIdempotent)

        query = Self.query(.put, conditional)
        query.body = .object(["etag": .string("CAE=")])
        #expect(try Self.built(query).isIdempotent, "an etag in the body, as setIamPolicy carries it")
        query.body = .object(["etag": .null])
        #expect(try !Self.built(query).isIdempotent, "a null etag is no precondition")
        query.body = .object(["bindings": .array([])])
        #expect(try !Self.built(query).isIdempotent)
    }

    @Test func aDeclaredIdempotencyWinsOverTheClass() throws {
        var query = Self.query(.delete, .nonIdempotent)
        query.execution.idempotency = .always
        #expect(try Self.built(query).isIdempotent)
        query = Self.query(.get, .idempotent)
        query.execution.idempotency = .never
        #expect(try !Self.built(query).isIdempotent)
    }

    /// A query's deduplication parameter (AIP-155's `requestId`): a new UUID for each build of
    /// the request (once per execution), a caller's own kept, and the request safe to repeat.
    @Test func aDeduplicationParameterIsFilledOnceAndMakesTheWriteSafeToRepeat() throws {
        var query = Self.query(.post, .nonIdempotent)
        #expect(try !Self.built(query).isIdempotent)
        query.deduplicationParameter = "requestId"
        let first = try Self.built(query), second = try Self.built(query)
        func id(_ request: HTTPRequest) -> String? {
            URLComponents(url: request.url, resolvingAgainstBaseURL: false)?.queryItems?.first { $0.name == "requestId" }?.value
        }
        let ids = try [first, second].map { try #require(id($0)) }
        for id in ids {
            #expect(UUID(uuidString: id) != nil && id == id.lowercased() && id != "00000000-0000-0000-0000-000000000000", "\(id)")
        }
        #expect(ids[0] != ids[1], "each execution is a new request, so it gets a new ID")
        #expect(first.isIdempotent && second.isIdempotent, "the server ignores a repeat: safe to re-send, whatever the class")

        query.parameters.set("requestId", "caller-chosen-1")
        let own = try Self.built(query)
        #expect(id(own) == "caller-chosen-1" && own.isIdempotent)
        query.parameters.set("requestId", "")
        #expect(try UUID(uuidString: id(Self.built(query)) ?? "") != nil, "an empty ID is no ID: replaced")

        query.parameters.set("requestId", nil)
        query.execution.idempotency = .never
        #expect(try !Self.built(query).isIdempotent, "a declaration still wins")

        var read = Self.query(.get, nil)
        read.deduplicationParameter = "requestId"
        #expect(try id(Self.built(read)) == nil, "a GET keeps its URL (and its cache key)")
    }
}
