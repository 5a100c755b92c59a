import CCurl
import Foundation

/// Discovery documents fetched by name, with libcurl's easy interface on a thread of its own.
///
/// Not through Courier's `ServiceActor`: the generator, and the SwiftPM plugins' tool built from
/// it, would then compile Courier a second time for the host in every build of this package and
/// of every package using the plugins. One GET needs none of the pipeline: it is retried twice
/// after a transport failure, a 429 or a 5xx, and the API key goes in `X-Goog-Api-Key`, never
/// in the URL, so no message can show it. No credentials are needed otherwise.
/// `courier generate drive:v3` and the command plugin's `--api drive:v3` both come here.
extension DiscoveryName {
    /// The document's bytes, or a typed error naming what failed: the name the service does not
    /// know (404), another status, or the transport failure.
    public func fetch(root: URL = DiscoveryName.googleRoot, apiKey: String? = nil) async throws -> Data {
        let url = url(root: root)
        var failure = ""
        for attempt in 0..<3 {
            if attempt > 0 { try await Task.sleep(for: .milliseconds(250 << attempt)) }
            switch await DiscoveryDownload.get(url, apiKey: apiKey) {
            case .answered(200, let body):
                return body
            case .answered(404, _):
                throw DiscoveryFetchError(message: "the Discovery service at \(root.absoluteString) knows no API \(description) (404)")
            case .answered(let status, _) where status == 429 || status >= 500:
                failure = "it answered \(status)"
            case .answered(let status, _):
                throw DiscoveryFetchError(message: "the Discovery service answered \(status) for \(description) at \(url.absoluteString)")
            case .failed(let reason):
                failure = reason
            }
        }
        throw DiscoveryFetchError(message: "could not fetch the \(description) Discovery document from \(url.absoluteString): \(failure)")
    }

    /// What a generator's document argument names: a file's bytes, else the named API's document
    /// fetched from `root`. Throws ``DiscoveryFetchError`` for anything else.
    public static func document(_ argument: String, root: URL, apiKey: String?) async throws -> Data {
        if let data = FileManager.default.contents(atPath: argument) { return data }
        guard let name = DiscoveryName(argument) else { throw DiscoveryFetchError(message: unreadable(argument)) }
        return try await name.fetch(root: root, apiKey: apiKey)
    }
}

/// One GET with libcurl's easy interface, run on a thread of its own so that no task's thread
/// blocks in `curl_easy_perform`.
private final class DiscoveryDownload: @unchecked Sendable { // touched by one thread at a time: the one running get()
    enum Outcome: Sendable {
        case answered(Int, Data)
        case failed(String)
    }

    private var body = Data()
    private static let limit = 64 << 20 // the largest Discovery documents are about 3 MB

    static func get(_ url: URL, apiKey: String?) async -> Outcome {
        await withCheckedContinuation { continuation in
            let thread = Thread { continuation.resume(returning: DiscoveryDownload().perform(url, apiKey: apiKey)) }
            thread.name = "courier-discovery-fetch"
            thread.start()
        }
    }

    private func perform(_ url: URL, apiKey: String?) -> Outcome {
        guard let easy = curl_easy_init() else { return .failed("libcurl could not make a handle") }
        defer { curl_easy_cleanup(easy) }
        var headers: UnsafeMutablePointer<curl_slist>? = curl_slist_append(nil, "Accept: application/json")
        if let apiKey { headers = curl_slist_append(headers, "X-Goog-Api-Key: \(apiKey)") }
        defer { curl_slist_free_all(headers) }
        var errorBuffer = [CChar](repeating: 0, count: Int(CURL_ERROR_SIZE))
        let result = url.absoluteString.withCString { text -> CURLcode in
            errorBuffer.withUnsafeMutableBufferPointer { errors -> CURLcode in
                courier_easy_setopt_ptr(easy, CURLOPT_URL, text)
                courier_easy_setopt_ptr(easy, CURLOPT_HTTPHEADER, headers)
                courier_easy_setopt_ptr(easy, CURLOPT_ERRORBUFFER, errors.baseAddress)
                courier_easy_setopt_long(easy, CURLOPT_FOLLOWLOCATION, 1)
                courier_easy_setopt_long(easy, CURLOPT_MAXREDIRS, 5)
                courier_easy_setopt_long(easy, CURLOPT_CONNECTTIMEOUT, 10)
                courier_easy_setopt_long(easy, CURLOPT_TIMEOUT, 120)
                courier_easy_setopt_long(easy, CURLOPT_NOSIGNAL, 1)
                courier_easy_setopt_ptr(easy, CURLOPT_ACCEPT_ENCODING, "") // whatever libcurl decodes
                courier_easy_setopt_ptr(easy, CURLOPT_WRITEDATA, Unmanaged.passUnretained(self).toOpaque())
                courier_easy_setopt_data_cb(easy, CURLOPT_WRITEFUNCTION) { buffer, size, count, context in
                    guard let buffer, let context else { return 0 }
                    let download = Unmanaged<DiscoveryDownload>.fromOpaque(context).takeUnretainedValue()
                    let length = size * count
                    guard download.body.count + length <= DiscoveryDownload.limit else { return 0 } // too large: curl fails the transfer
                    download.body.append(UnsafeRawPointer(buffer).assumingMemoryBound(to: UInt8.self), count: length)
                    return length
                }
                return curl_easy_perform(easy)
            }
        }
        guard result == CURLE_OK else {
            let detail = String(decoding: errorBuffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
            return .failed(detail.isEmpty ? String(cString: curl_easy_strerror(result)) : detail)
        }
        var status = 0
        courier_easy_getinfo_long(easy, CURLINFO_RESPONSE_CODE, &status)
        return .answered(status, body)
    }
}
