@testable import Courier
import CourierTestServer
import CourierTesting
import CourierTestSupport
import Foundation
import Logging
import Testing

/// Workload identity federation from AWS, end to end: the test server's EC2 metadata service
/// (IMDSv2) and its STS, which checks the signed `GetCallerIdentity` request as AWS would.
@Suite struct AWSSourceTests {
    static func credentialsFile(_ server: TestServer, metadata: Bool = true) throws -> URL {
        var source: [String: Any] = ["environment_id": "aws1"]
        if metadata {
            source["region_url"] = server.url("/aws/latest/meta-data/placement/availability-zone").absoluteString
            source["url"] = server.url("/aws/latest/meta-data/iam/security-credentials").absoluteString
            source["imdsv2_session_token_url"] = server.url("/aws/latest/api/token").absoluteString
        }
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("aws-\(UUID()).json")
        try JSONSerialization.data(withJSONObject: [
            "type": "external_account", "audience": server.sts.audience,
            "subject_token_type": "urn:ietf:params:aws:token-type:aws4_request", "token_url": server.url("/sts/v1/token").absoluteString,
            "credential_source": source,
        ]).write(to: file)
        return file
    }

    @Test func theRolesKeysFromIMDSv2SignTheRequestSTSAccepts() async throws {
        let capture = CapturedLog()
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("aws-log-\(UUID())")
        defer { try? FileManager.default.removeItem(at: directory) }
        var texts: [String] = []
        var secrets: [String] = []
        try await withTestServer { server in
            server.notes.seed(count: 1)
            let file = try Self.credentialsFile(server)
            defer { try? FileManager.default.removeItem(at: file) }
            let authorizer = try ApplicationDefaultCredentials.authorizer(scopes: ["notes.read"],
                                                                          environment: ["GOOGLE_APPLICATION_CREDENTIALS": file.path])
            var configuration = ServiceActor.Configuration.testing(server.baseURL)
            configuration.auth.authorizer = authorizer
            var logger = Logger(label: "aws", factory: capture.handler)
            logger.logLevel = .trace
            configuration.telemetry.logger = logger
            configuration.telemetry.httpLog = HTTPLogOptions(directory: directory)
            try await withCheckedService(configuration: configuration) { service in
                _ = try await service.execute(AuthFixtures.protectedNote("note-0001"))
            }
            let aws = server.sts.aws
            #expect(aws.sessionTokenRequests == 1 && aws.metadataReads == 3 && aws.refusedReads == 0) // zone, role, keys
            #expect(aws.verifiedCount == 1 && server.sts.exchangeCount == 1)
            #expect(aws.lastSignedHeaders == ["host", "x-amz-date", "x-amz-security-token", "x-goog-cloud-target-resource"])
            secrets += [aws.roleKeys.secretAccessKey, aws.roleKeys.sessionToken ?? ""]
            texts.append("\(authorizer)")
        }
        texts += capture.lines.withLock { $0 }
        for name in try FileManager.default.contentsOfDirectory(atPath: directory.path) {
            texts.append(try String(contentsOf: directory.appendingPathComponent(name), encoding: .utf8))
        }
        #expect(texts.joined().contains("PUT") && texts.joined().contains("_snip_")) // the log did see the exchange
        for text in texts {
            #expect(!text.contains("s3kr1t"), "a secret leaked into: \(text.prefix(300))")
            for secret in secrets { #expect(!text.contains(secret)) }
        }
    }

    @Test func keysInTheEnvironmentNeedNoMetadataService() async throws {
        try await withTestServer { server in
            let keys = AWSFake.Keys(accessKeyID: "AKIAUSER0EXAMPLE", secretAccessKey: "USER-SECRET-s3kr1t", sessionToken: "USER-SESSION-s3kr1t")
            server.sts.aws.register(keys)
            let file = try Self.credentialsFile(server)
            defer { try? FileManager.default.removeItem(at: file) }
            let environment = ["GOOGLE_APPLICATION_CREDENTIALS": file.path, "AWS_REGION": "eu-west-1", "AWS_ACCESS_KEY_ID": keys.accessKeyID,
                               "AWS_SECRET_ACCESS_KEY": keys.secretAccessKey, "AWS_SESSION_TOKEN": keys.sessionToken ?? ""]
            _ = try await ApplicationDefaultCredentials.authorizer(scopes: ["notes.read"], environment: environment).currentToken()
            #expect(server.sts.aws.verifiedCount == 1)
            #expect(server.sts.aws.sessionTokenRequests == 0 && server.sts.aws.metadataReads == 0)
        }
    }

    @Test func aRequestSignedWithTheWrongSecretIsRefusedBySTS() async throws {
        try await withTestServer { server in
            server.sts.aws.register(.init(accessKeyID: "AKIAUSER0EXAMPLE", secretAccessKey: "RIGHT-s3kr1t", sessionToken: nil))
            let file = try Self.credentialsFile(server, metadata: false)
            defer { try? FileManager.default.removeItem(at: file) }
            let environment = ["GOOGLE_APPLICATION_CREDENTIALS": file.path, "AWS_DEFAULT_REGION": "us-west-2",
                               "AWS_ACCESS_KEY_ID": "AKIAUSER0EXAMPLE", "AWS_SECRET_ACCESS_KEY": "WRONG-s3kr1t"]
            await #expect(throws: AuthError.invalidGrant) {
                _ = try await ApplicationDefaultCredentials.authorizer(scopes: [], environment: environment).currentToken()
            }
            #expect(server.sts.aws.verifiedCount == 0 && server.sts.requestCount == 1)
        }
    }

    @Test func withNeitherEnvironmentNorMetadataURLsTheErrorSaysWhatIsMissing() async throws {
        try await withTestServer { server in
            let file = try Self.credentialsFile(server, metadata: false)
            defer { try? FileManager.default.removeItem(at: file) }
            do {
                _ = try await ApplicationDefaultCredentials.authorizer(scopes: [], environment: ["GOOGLE_APPLICATION_CREDENTIALS": file.path]).currentToken()
                Issue.record("no error")
            } catch let error as AuthError {
                #expect(error == .subjectTokenSource && error.message.contains("AWS_ACCESS_KEY_ID"), "\(error)")
            }
        }
    }
}
