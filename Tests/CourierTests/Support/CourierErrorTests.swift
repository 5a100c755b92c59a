@testable import Courier
import CourierTestSupport
import Foundation
import Testing

/// One error shape (`CourierError`): kind, message, underlying error and description, the same
/// way for every error type, with the public kinds unchanged.
@Suite struct CourierErrorTests {
    @Test func everyPublicErrorTypeHasTheOneShape() throws {
        var errorTypes = 0
        for folder in ["Sources/Courier", "Sources/CourierLoad"] {
            let root = Repository.path(folder)
            let enumerator = FileManager.default.enumerator(atPath: root.path)
            while let path = enumerator?.nextObject() as? String {
                guard path.hasSuffix(".swift") else { continue }
                let text = try String(contentsOf: root.appendingPathComponent(path), encoding: .utf8)
                for match in text.matches(of: /(?m)^(?:public )?(?:struct|enum) (\w+): ([^{]*)\{/) {
                    let conformances = match.output.2
                    guard conformances.contains("Error") else { continue }
                    errorTypes += 1
                    // CodedError is the internal body of the errors with a code (it refines CourierError).
                    #expect(conformances.contains("CourierError") || conformances.contains("CodedError"),
                            "\(folder)/\(path): \(match.output.1) is an error without the CourierError shape")
                }
            }
        }
        #expect(errorTypes >= 10)
    }

    @Test func kindsAreTheStableNamesTheyWere() {
        let errors: [(any CourierError, String)] = [
            (TransportError.timedOut, "timedOut"), (TransportError.connectionLost, "connectionLost"),
            (AuthError.invalidGrant, "invalidGrant"), (AuthError.noCredentials, "noCredentials"),
            (QueryError.malformedResponse, "malformedResponse"), (UploadError.sessionExpired, "sessionExpired"),
            (BatchError.missingResponse, "missingResponse"), (JSONParsingError.truncated, "truncated"),
            (IntegrityError(message: "md5"), "checksumMismatch"),
            (CircuitOpenError(host: "h:443", retryAfter: nil), "circuitOpen"),
            (MultipartError(code: .noParts, message: "none"), "noParts"),
        ]
        for (error, kind) in errors { #expect(error.kind == kind, "\(error)") }
    }

    @Test func descriptionsNameTypeKindAndMessage() {
        #expect(UploadError(code: .fileChanged, message: "size differs").description == "UploadError.fileChanged: size differs")
        #expect(BatchError(code: .notAllowed, message: "a media upload").description == "BatchError.notAllowed: a media upload")
        #expect(QueryError(code: .invalidQuery, message: "").description == "QueryError.invalidQuery")
        #expect(TransportError(.timedOut, curlCode: 28, message: "after 5 s").description == "TransportError.timedOut (curl 28): after 5 s")
        #expect(CircuitOpenError(host: "h:443", retryAfter: .seconds(2)).message.contains("h:443"))
    }

    @Test func equalityIsByKindSoCatchClausesMatchAnyMessage() {
        #expect(AuthError(.invalidGrant, message: "revoked") == .invalidGrant)
        #expect(UploadError(code: .sessionExpired, message: "410") != .fileChanged)
        #expect(Set([TransportError(.timedOut, message: "a"), TransportError(.timedOut, message: "b")]).count == 1)
        // A circuit error is about its host: two hosts' refusals differ.
        #expect(CircuitOpenError(host: "a", retryAfter: nil) != CircuitOpenError(host: "b", retryAfter: nil))
    }

    /// The documented `catch Type.kind` clauses compile and match by kind, whatever the message.
    @Test func staticMembersArePatternsOfCatchClauses() {
        func caught(_ error: any Error) -> String {
            do { throw error } catch TransportError.timedOut {
                return "timedOut"
            } catch AuthError.invalidGrant {
                return "invalidGrant"
            } catch UploadError.sessionExpired {
                return "sessionExpired"
            } catch QueryError.malformedResponse {
                return "malformedResponse"
            } catch BatchError.missingResponse {
                return "missingResponse"
            } catch {
                return "other"
            }
        }
        #expect(caught(TransportError(.timedOut, message: "after 5 s")) == "timedOut")
        #expect(caught(TransportError.connectionLost) == "other")
        #expect(caught(AuthError(.invalidGrant, message: "revoked")) == "invalidGrant")
        #expect(caught(UploadError(code: .sessionExpired, message: "410")) == "sessionExpired")
        #expect(caught(QueryError(code: .malformedResponse, message: "not JSON")) == "malformedResponse")
        #expect(caught(BatchError(code: .missingResponse)) == "missingResponse")
        #expect(caught(BatchError.notAllowed) == "other")
    }

    @Test func theUnderlyingErrorIsKept() throws {
        let json = JSONParsingError(code: .truncated, offset: 3, message: "ended inside a string")
        let query = QueryError(code: .malformedResponse, message: "not JSON", jsonError: json)
        #expect((query.underlyingError as? JSONParsingError) == .truncated)
        #expect(TransportError.timedOut.underlyingError == nil)
    }
}
