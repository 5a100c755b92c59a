import Foundation

/// What a person must do on another device to let the device flow finish.
public struct DeviceCodePrompt: Sendable, Hashable, CustomStringConvertible {
    /// The page to visit (Google's `verification_url`, RFC 8628's `verification_uri`).
    public let verificationURL: URL
    /// The code to type there.
    public let userCode: String
    /// The page with the code filled in, when the provider offers one (for a QR code).
    public let verificationURLComplete: URL?
    /// How long the code stays valid.
    public let expiresIn: Duration

    public var description: String { "Visit \(verificationURL.absoluteString) and enter the code \(userCode)" }
}

extension UserSignIn {
    /// Signs in on a machine with no browser (RFC 8628's device authorization grant): `show`
    /// tells the person where to go and what code to type; this then polls the token endpoint
    /// at the provider's `interval` (5 s more after each `slow_down`) until they approve.
    ///
    /// Google offers this flow to clients of type "TVs and limited input devices", for a
    /// limited set of scopes (Drive's per-file scope, YouTube, profile, not all of Drive or Gmail).
    ///
    /// - Parameters:
    ///   - clock: Times the polls (a virtual clock in tests).
    ///   - show: Presents the prompt; called once, before polling starts.
    /// - Throws: ``AuthError/accessDenied`` when the person declines; ``AuthError/signInTimedOut``
    ///   when the code expires (`expired_token`); `CancellationError` when the task is cancelled,
    ///   which stops polling at once.
    public func withDeviceCode(clock: any Clock<Duration> = ContinuousClock(),
                               show: @Sendable (DeviceCodePrompt) async -> Void) async throws -> UserCredentials {
        try await pollForApproval(clock: clock, show: show)
    }

    private func pollForApproval<C: Clock<Duration>>(clock: C, show: @Sendable (DeviceCodePrompt) async -> Void) async throws -> UserCredentials {
        let start = try await TokenEndpoint(url: client.deviceAuthorizationURL).post(
            form: client.formFields.filter { $0.0 == "client_id" } + [("scope", scopes.joined(separator: " "))],
            name: "oauth2.device", through: service)
        let device = try DeviceAuthorization(start)
        await show(device.prompt)
        let deadline = clock.now.advanced(by: device.prompt.expiresIn)
        var interval = device.interval
        while true {
            try await clock.sleep(for: interval)
            guard clock.now < deadline else {
                throw AuthError(.signInTimedOut, message: "the device code expired before it was approved", oauthError: "expired_token")
            }
            do {
                return try await redeem([("grant_type", "urn:ietf:params:oauth:grant-type:device_code"), ("device_code", device.deviceCode)],
                                        name: "oauth2.device-token")
            } catch let error as AuthError {
                switch DevicePoll.next(after: error) {
                case .wait: continue
                case .slowDown: interval += .seconds(5)
                case .stop(let final): throw final
                }
            }
        }
    }
}

/// The device authorization response (RFC 8628 §3.2; Google says `verification_url`).
struct DeviceAuthorization: Sendable {
    let deviceCode: String
    let prompt: DeviceCodePrompt
    let interval: Duration

    init(_ body: JSONObject) throws(AuthError) {
        guard let deviceCode = body["device_code"]?.stringValue, let userCode = body["user_code"]?.stringValue,
              let page = (body["verification_uri"] ?? body["verification_url"])?.stringValue, let url = URL(string: page)
        else { throw AuthError(.tokenEndpoint, message: "the device authorization response lacks device_code, user_code or verification_uri") }
        // Bounded before they become durations: a hostile answer cannot trap or stall polling for years.
        let expiresIn = Self.bounded(body["expires_in"]?.doubleValue, default: 1800, 1...86_400)
        let interval = Self.bounded(body["interval"]?.doubleValue, default: 5, 1...3600)
        self.deviceCode = deviceCode
        self.interval = .milliseconds(Int64(interval * 1000))
        prompt = DeviceCodePrompt(verificationURL: url, userCode: userCode,
                                  verificationURLComplete: body["verification_uri_complete"]?.stringValue.flatMap(URL.init(string:)),
                                  expiresIn: .milliseconds(Int64(expiresIn * 1000)))
    }
}

extension DeviceAuthorization {
    /// `value` within `range`; `fallback` when absent or not a finite number.
    static func bounded(_ value: Double?, default fallback: Double, _ range: ClosedRange<Double>) -> Double {
        guard let value, value.isFinite else { return fallback }
        return min(max(value, range.lowerBound), range.upperBound)
    }
}

/// What the device flow does after a poll the token endpoint refused (RFC 8628 §3.5).
enum DevicePoll: Equatable {
    case wait, slowDown, stop(AuthError)

    static func next(after error: AuthError) -> DevicePoll {
        switch error.oauthError {
        case "authorization_pending": .wait
        case "slow_down": .slowDown
        case "access_denied": .stop(AuthError(.accessDenied, message: error.message, oauthError: error.oauthError, status: error.status))
        case "expired_token": .stop(AuthError(.signInTimedOut, message: error.message, oauthError: error.oauthError, status: error.status))
        default: .stop(error)
        }
    }
}
