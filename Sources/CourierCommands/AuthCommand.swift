import ArgumentParser
import Courier
import Foundation

/// `courier auth`: sign in as a person for Application Default Credentials, and show the token
/// those credentials give.
public struct AuthCommand: AsyncParsableCommand {
    public static let configuration = CommandConfiguration(
        commandName: "auth",
        abstract: "Sign in with a Google account for Application Default Credentials.",
        subcommands: [AuthLoginCommand.self, AuthPrintAccessTokenCommand.self]
    )

    public init() {}
}

/// `courier auth login`: as `gcloud auth application-default login`, with the tool's own OAuth client.
public struct AuthLoginCommand: AsyncParsableCommand {
    public static let configuration = CommandConfiguration(
        commandName: "login",
        abstract: "Sign in and save the credentials where Application Default Credentials finds them.",
        discussion: """
            Opens the consent page in your browser ($BROWSER, else xdg-open; the URL is printed \
            too) and waits for its redirect to 127.0.0.1. With --no-browser, prints a page and a \
            code to enter on any other device instead (the device flow: the OAuth client must be \
            of type "TVs and limited input devices", and Google allows it fewer scopes).

            The credentials (type authorized_user) are written, readable by you alone, to \
            $CLOUDSDK_CONFIG/application_default_credentials.json, else \
            ~/.config/gcloud/application_default_credentials.json. Every program that uses \
            Application Default Credentials then runs as you, with no change.

            Examples:
              courier auth login --client-secret client_secret.json --scopes https://www.googleapis.com/auth/drive.readonly
              courier auth login --client-secret client_secret.json --no-browser
            """
    )

    @Option(help: "The OAuth client's client_secret.json, as the Cloud console downloads it.")
    var clientSecret: String

    @Option(parsing: .upToNextOption, help: "The scopes to ask for (space- or comma-separated).")
    var scopes: [String] = ["https://www.googleapis.com/auth/cloud-platform"]

    @Flag(help: "Sign in on another device with a code (the device flow): for a machine with no browser.")
    var noBrowser = false

    @Option(help: "How long to wait for the sign-in (as in 5m, 90s).")
    var timeout: String = "5m"

    @Option(help: "The project whose quota the credentials use (quota_project_id).")
    var quotaProject: String?

    public init() {}

    public func run() async throws {
        let client = try OAuthClient(contentsOf: URL(fileURLWithPath: (clientSecret as NSString).expandingTildeInPath))
        let scopeList = scopes.flatMap { $0.split(whereSeparator: { $0 == "," || $0 == " " }).map(String.init) }
        guard !scopeList.isEmpty else { throw ValidationError("--scopes names no scope") }
        let timeout = try DurationParsing.require(timeout, "--timeout")
        let signIn = UserSignIn(client: client, scopes: scopeList)
        let credentials: UserCredentials
        if noBrowser {
            credentials = try await signIn.withDeviceCode { prompt in
                FileHandle.standardError.write(Data("On any device, visit \(prompt.verificationURL.absoluteString) and enter the code \(prompt.userCode)\n".utf8))
            }
        } else {
            credentials = try await signIn.withBrowser(timeout: timeout)
        }
        let file = try ApplicationDefaultCredentials.save(credentials, quotaProjectID: quotaProject)
        FileHandle.standardError.write(Data("Credentials saved to \(file.path)\nScopes granted: \(credentials.scopes.joined(separator: " "))\n".utf8))
    }
}

/// `courier auth print-access-token`: the access token Application Default Credentials give now.
public struct AuthPrintAccessTokenCommand: AsyncParsableCommand {
    public static let configuration = CommandConfiguration(
        commandName: "print-access-token",
        abstract: "Print an access token from Application Default Credentials (for curl, say).",
        discussion: "The token is a secret: anyone who has it acts as you until it expires (an hour)."
    )

    @Option(parsing: .upToNextOption, help: "The scopes to ask for; a user's credentials keep those granted at sign-in.")
    var scopes: [String] = ["https://www.googleapis.com/auth/cloud-platform"]

    public init() {}

    public func run() async throws {
        let scopeList = scopes.flatMap { $0.split(whereSeparator: { $0 == "," || $0 == " " }).map(String.init) }
        let authorizer = try ApplicationDefaultCredentials.authorizer(scopes: scopeList)
        print(try await authorizer.currentToken().value)
    }
}
