import Foundation

/// Workload identity federation from AWS (`credential_source.environment_id: aws1`), as
/// Google's libraries do it: the region and the role's credentials from the environment or the
/// EC2 metadata service (IMDSv2: a session token first, when the file names its URL), then a
/// `GetCallerIdentity` request signed with AWS Signature Version 4 is the subject token STS
/// verifies with AWS.
public struct AWSSubjectToken: Sendable, Hashable {
    public var regionURL: URL?
    /// The metadata service's security-credentials URL (the role name, then `/<role>`).
    public var credentialsURL: URL?
    /// `https://sts.{region}.amazonaws.com?Action=GetCallerIdentity&Version=2011-06-15`.
    public var verificationURL: String
    public var sessionTokenURL: URL?
    /// The `AWS_*` variables of the environment the credentials were read in.
    let environment: [String: String]

    init(_ source: JSONObject, environment: [String: String]) throws(AuthError) {
        guard let id = source["environment_id"]?.stringValue, id.hasPrefix("aws") else {
            throw AuthError(.invalidCredentials, message: "credential_source is not an AWS source")
        }
        guard id == "aws1" else { throw AuthError(.unsupportedCredentials, message: "AWS environment \(id) is not supported (only aws1)") }
        func url(_ name: String) throws(AuthError) -> URL? {
            guard let text = source[name]?.stringValue else { return nil }
            guard let url = URL(string: text), url.host != nil else {
                throw AuthError(.invalidCredentials, message: "credential_source.\(name) is not a URL")
            }
            return url
        }
        regionURL = try url("region_url")
        credentialsURL = try url("url")
        sessionTokenURL = try url("imdsv2_session_token_url")
        verificationURL = source["regional_cred_verification_url"]?.stringValue
            ?? "https://sts.{region}.amazonaws.com?Action=GetCallerIdentity&Version=2011-06-15"
        self.environment = environment.filter { $0.key.hasPrefix("AWS_") }
    }

    private func variable(_ name: String) -> String? {
        environment[name].flatMap { $0.isEmpty ? nil : $0 }
    }

    /// The signed request, serialized as Google's STS takes it (URL-encoded JSON: url, method,
    /// headers sorted by name).
    func read(audience: String, through service: ServiceActor?, now: Date = Date()) async throws(AuthError) -> String {
        let regionInEnvironment = variable("AWS_REGION") ?? variable("AWS_DEFAULT_REGION")
        let keysInEnvironment = variable("AWS_ACCESS_KEY_ID").flatMap { id in variable("AWS_SECRET_ACCESS_KEY").map { (id, $0) } }
        // IMDSv2's session token, only when the metadata service is asked at all.
        var metadataHeaders: [String: String] = [:]
        if regionInEnvironment == nil || keysInEnvironment == nil, let sessionTokenURL {
            var request = HTTPRequest(method: .put, url: sessionTokenURL)
            request.headers["X-aws-ec2-metadata-token-ttl-seconds"] = "300"
            metadataHeaders["X-aws-ec2-metadata-token"] = try await Self.text(request, what: "the IMDSv2 session token", through: service)
        }
        let credentials: AWSSignatureV4.Credentials
        if let (id, secret) = keysInEnvironment {
            credentials = .init(accessKeyID: id, secretAccessKey: secret, sessionToken: variable("AWS_SESSION_TOKEN"))
        } else {
            credentials = try await roleCredentials(headers: metadataHeaders, through: service)
        }
        let region: String
        if let regionInEnvironment {
            region = regionInEnvironment
        } else {
            guard let regionURL else { throw AuthError(.subjectTokenSource, message: "no AWS region: set AWS_REGION, or region_url in the credentials") }
            var request = HTTPRequest(method: .get, url: regionURL)
            for (name, value) in metadataHeaders { request.headers[name] = value }
            // The metadata service answers with the availability zone (us-east-2b): the region is all but its letter.
            let zone = try await Self.text(request, what: "the AWS region", through: service)
            region = String(zone.dropLast())
        }
        return try signedCallerIdentity(credentials: credentials, region: region, audience: audience, now: now)
    }

    private func roleCredentials(headers: [String: String], through service: ServiceActor?) async throws(AuthError) -> AWSSignatureV4.Credentials {
        guard let credentialsURL else {
            throw AuthError(.subjectTokenSource, message: "no AWS credentials: set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, or url in the credentials")
        }
        var roleRequest = HTTPRequest(method: .get, url: credentialsURL)
        for (name, value) in headers { roleRequest.headers[name] = value }
        let role = try await Self.text(roleRequest, what: "the AWS role name", through: service).trimmingCharacters(in: .whitespacesAndNewlines)
        var keysRequest = HTTPRequest(method: .get, url: credentialsURL.appendingPathComponent(role))
        for (name, value) in headers { keysRequest.headers[name] = value }
        let response = try await CredentialRequest.send(keysRequest, name: "aws.credentials", through: service)
        guard (200..<300).contains(response.status), let object = (try? JSONValue(parsing: response.body))?.objectValue,
              let id = object["AccessKeyId"]?.stringValue, !id.isEmpty,
              let secret = object["SecretAccessKey"]?.stringValue, !secret.isEmpty
        else {
            throw AuthError(.subjectTokenSource, message: "the AWS metadata service gave no AccessKeyId and SecretAccessKey for role \(role) (HTTP \(response.status))",
                            status: response.status)
        }
        return .init(accessKeyID: id, secretAccessKey: secret, sessionToken: object["Token"]?.stringValue)
    }

    private static func text(_ request: HTTPRequest, what: String, through service: ServiceActor?) async throws(AuthError) -> String {
        var request = request
        request.timeouts = Timeouts(connect: .seconds(5), total: .seconds(15))
        let response = try await CredentialRequest.send(request, name: "aws.metadata", through: service)
        guard (200..<300).contains(response.status), !response.body.isEmpty else {
            throw AuthError(.subjectTokenSource, message: "the AWS metadata service did not give \(what) (HTTP \(response.status))", status: response.status)
        }
        return String(decoding: response.body, as: UTF8.self)
    }

    /// The `GetCallerIdentity` request, signed (the pool provider's name signed with it), as STS's subject token.
    func signedCallerIdentity(credentials: AWSSignatureV4.Credentials, region: String, audience: String, now: Date) throws(AuthError) -> String {
        let text = verificationURL.replacingOccurrences(of: "{region}", with: region)
        guard let components = URLComponents(string: text), let host = components.host else {
            throw AuthError(.invalidCredentials, message: "regional_cred_verification_url is not a URL")
        }
        let authority = components.port.map { "\(host):\($0)" } ?? host
        let service = host.split(separator: ".").first.map(String.init) ?? host
        let signer = AWSSignatureV4(credentials: credentials, region: region, service: service)
        var headers: [(name: String, value: String)] = [("Host", authority), ("X-Amz-Date", AWSSignatureV4.timestamps(now).amzDate),
                                                        ("X-Goog-Cloud-Target-Resource", audience)]
        if let token = credentials.sessionToken { headers.append(("X-Amz-Security-Token", token)) }
        let signature = signer.sign(AWSSignatureV4.Request(method: "POST", path: components.percentEncodedPath, query: components.percentEncodedQuery ?? "",
                                                           headers: headers, body: Data()), at: now)
        headers.append(("Authorization", signature.authorization))
        let sorted = headers.sorted { $0.name == $1.name ? $0.value < $1.value : $0.name < $1.name }
        let object: JSONObject = ["url": .string(text), "method": .string("POST"),
                                  "headers": .array(sorted.map { .object(["key": .string($0.name), "value": .string($0.value)]) })]
        return URITemplate.percentEncode(String(decoding: object.serialized(), as: UTF8.self), keep: URITemplate.isUnreserved)
    }
}
