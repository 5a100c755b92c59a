import Courier
import CourierTestSupport
import Foundation
@testable import GoogleStorage
import Testing

/// Google's V4 signing cases (`v4_signatures.json`, pinned in Tests/Conformance), signed with
/// the key they were made with: every URL and every POST policy must match byte for byte.
@Suite struct SignedURLConformanceTests {
    struct File: Decodable {
        var signingV4Tests: [URLCase]
        var postPolicyV4Tests: [PolicyCase]
    }

    struct URLCase: Decodable, CustomStringConvertible {
        var description: String
        var bucket: String
        var object: String?
        var method: String
        var expiration: Int64
        var timestamp: String
        var expectedUrl: String
        var expectedCanonicalRequest: String
        var expectedStringToSign: String
        var headers: [String: String]?
        var queryParameters: [String: String]?
        var scheme: String?
        var urlStyle: String?
        var bucketBoundHostname: String?
        var hostname: String?
        var clientEndpoint: String?
        var emulatorHostname: String?
        var universeDomain: String?
    }

    struct PolicyCase: Decodable, CustomStringConvertible {
        struct Input: Decodable {
            var scheme: String?
            var bucket: String
            var object: String
            var expiration: Int64
            var timestamp: String
            var urlStyle: String?
            var bucketBoundHostname: String?
            var fields: [String: String]?
            var conditions: Conditions?
        }

        struct Conditions: Decodable {
            var startsWith: [String]?
            var contentLengthRange: [Int64]?
        }

        struct Output: Decodable {
            var url: String
            var fields: [String: String]
            var expectedDecodedPolicy: String
        }

        var description: String
        var policyInput: Input
        var policyOutput: Output
    }

    static let directory = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Conformance/googleapis-conformance-tests")

    static func cases() throws -> File {
        try JSONDecoder().decode(File.self, from: Data(contentsOf: directory.appendingPathComponent("v4_signatures.json")))
    }

    static func key() throws -> ServiceAccountKey {
        try ServiceAccountKey(contentsOf: directory.appendingPathComponent("test_service_account.not-a-test.json"))
    }

    static func date(_ text: String) throws -> Date {
        try #require(ISO8601DateFormatter().date(from: text), "timestamp \(text)")
    }

    static func style(_ name: String?, hostname: String?) -> StorageURLStyle {
        switch name {
        case "VIRTUAL_HOSTED_STYLE": .virtualHostedStyle
        case "BUCKET_BOUND_HOSTNAME": .bucketBoundHostname(hostname ?? "")
        default: .pathStyle
        }
    }

    @Test func theFileHasEveryCase() throws {
        let file = try Self.cases()
        #expect(file.signingV4Tests.count == 29)
        #expect(file.postPolicyV4Tests.count == 11)
    }

    @Test(arguments: try cases().signingV4Tests)
    func signedURL(_ testCase: URLCase) async throws {
        let key = try Self.key()
        // The libraries' three ways to name the host map to one option: a host name set for
        // signing wins over the client's endpoint, which wins over STORAGE_EMULATOR_HOST.
        let options = SignedURLOptions(
            method: testCase.method, expiration: .seconds(testCase.expiration), headers: testCase.headers ?? [:],
            queryParameters: testCase.queryParameters ?? [:],
            style: Self.style(testCase.urlStyle, hostname: testCase.bucketBoundHostname), scheme: testCase.scheme,
            endpoint: testCase.hostname ?? testCase.clientEndpoint, universeDomain: testCase.universeDomain,
            date: try Self.date(testCase.timestamp))
        let environment = testCase.emulatorHostname.map { ["STORAGE_EMULATOR_HOST": $0] } ?? [:]
        let parts = try V4SignedURL(bucket: testCase.bucket, object: testCase.object, options: options,
                                    account: key.clientEmail, environment: environment)
        // What is signed is the string to sign, which ends with the canonical request's hash.
        // One case of the file ("Universe domain with virtual hosted style") gives a canonical
        // request whose hash is not the one in its own string to sign (the bucket left in the
        // path); its string to sign and URL are those of the request without it, as ours is.
        // So the canonical request is compared where the file agrees with itself.
        #expect(parts.stringToSign == testCase.expectedStringToSign)
        if SHA256.hex(Data(testCase.expectedCanonicalRequest.utf8)) == testCase.expectedStringToSign.split(separator: "\n").last.map(String.init) {
            #expect(parts.canonicalRequest == testCase.expectedCanonicalRequest)
        } else {
            #expect(testCase.description == "Universe domain with virtual hosted style", "a new inconsistent case: look at it")
        }
        let signature = try await key.sign(Data(parts.stringToSign.utf8), through: nil).map { String(format: "%02x", $0) }.joined()
        #expect(parts.url(signature: signature) == testCase.expectedUrl)
    }

    @Test(arguments: try cases().postPolicyV4Tests)
    func postPolicy(_ testCase: PolicyCase) async throws {
        let input = testCase.policyInput
        var conditions: [PostPolicyCondition] = []
        if let startsWith = input.conditions?.startsWith, startsWith.count == 2 {
            conditions.append(.startsWith(field: startsWith[0], prefix: startsWith[1]))
        }
        if let range = input.conditions?.contentLengthRange, range.count == 2, range[0] <= range[1] {
            conditions.append(.contentLengthRange(range[0]...range[1]))
        }
        let options = PostPolicyOptions(expiration: .seconds(input.expiration), fields: input.fields ?? [:], conditions: conditions,
                                        style: Self.style(input.urlStyle, hostname: input.bucketBoundHostname), scheme: input.scheme,
                                        date: try Self.date(input.timestamp))
        let policy = try await StorageSigning.postPolicy(bucket: input.bucket, object: input.object, options: options,
                                                         signer: try Self.key())
        let document = try V4PostPolicy(bucket: input.bucket, object: input.object, options: options,
                                        account: try Self.key().clientEmail, environment: [:]).document
        // The policy field is the document's base64, which the signature covers.
        #expect(policy.fields["policy"].flatMap { Data(base64Encoded: $0) }.map { String(decoding: $0, as: UTF8.self) } == document)
        #expect(try JSONValue(parsing: Data(document.utf8)) == JSONValue(parsing: Data(testCase.policyOutput.expectedDecodedPolicy.utf8)))
        #expect(policy.url.absoluteString == testCase.policyOutput.url)
        #expect(policy.fields == testCase.policyOutput.fields)
    }
}
