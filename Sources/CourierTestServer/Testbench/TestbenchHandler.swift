import Foundation
import HTTPTypes
import Hummingbird
import NIOCore
import NIOPosix

/// Every request of the testbench: the Retry Test API, or a Cloud Storage method with the fault
/// its retry test plans for it.
struct TestbenchHandler: Sendable {
    let retryTests: RetryTestRegistry
    let store: StorageStore
    let signedURLs: SignedURLVerifier
    let baseURL: @Sendable () -> String

    func handle(_ request: Request, context: TestbenchContext) async throws -> Response {
        var request = request
        let body = try await request.collectBody(upTo: context.maxUploadSize)
        let call = APIRequest(method: request.method.rawValue, rawPath: request.uri.path, query: request.uri.query ?? "",
                              headers: request.headers.map { ($0.name.rawName, $0.value) }, body: Data(body.readableBytesView))
        if let answer = retryTestAPI(call) { return answer.hummingbirdResponse }
        if SignedURLVerifier.isFormUpload(call) { return signedURLs.handleForm(call, store: store).hummingbirdResponse }
        if SignedURLVerifier.isSigned(call) {
            // HTTP/1.1's Host arrives as the request's authority, not among its header fields.
            return signedURLs.handle(call, authority: request.head.authority, store: store).hummingbirdResponse
        }
        guard let route = store.route(call, baseURL: baseURL()) else {
            return StorageStore.error(404, "No route for \(call.method) \(call.rawPath)").hummingbirdResponse
        }
        store.record(route.method, headers: call.headers)
        guard let testID = call.header("x-retry-test-id"), let next = retryTests.peek(testID, method: route.method) else {
            return route.run(nil).hummingbirdResponse
        }
        switch RetryInstruction(next) {
        case .status(let status):
            retryTests.dequeue(testID, method: route.method)
            return StorageStore.error(status, "Retry Test: Caused a \(status)").hummingbirdResponse
        case .resetConnection:
            retryTests.dequeue(testID, method: route.method)
            // SO_LINGER 0: the close sends a reset, as the emulator's does.
            if let provider = context.channel as? any SocketOptionProvider {
                try? await provider.setSoLinger(linger(l_onoff: 1, l_linger: 0)).get()
            }
            try? await context.channel.close().get()
            throw CancellationError()
        case .brokenStream(let limit) where limit == 4 || route.method == "storage.objects.get":
            return brokenStream(route.run(nil), after: limit, testID: testID, method: route.method, channel: context.channel)
        case .truncatedFinalAnswer(let limit) where route.method == "storage.objects.insert":
            let answer = route.run(StorageStore.UploadFaults(registry: retryTests, testID: testID))
            // Only the answer that finds the resumable upload complete is cut, as the emulator's.
            guard let uploadID = call.parameter("upload_id"), store.isUploadComplete(uploadID) else { return answer.hummingbirdResponse }
            retryTests.dequeue(testID, method: route.method)
            return APIResponse(status: 200, headers: [("Content-Type", "application/json")], body: answer.body.prefix(limit)).hummingbirdResponse
        case .stall(let seconds, let after) where route.method == "storage.objects.insert":
            if store.uploadStalls(call, after: after) {
                retryTests.dequeue(testID, method: route.method)
                try? await Task.sleep(for: .seconds(seconds))
            }
            return route.run(StorageStore.UploadFaults(registry: retryTests, testID: testID)).hummingbirdResponse
        case .stall(let seconds, let after):
            return stalled(route.run(nil), after: after, seconds: seconds, testID: testID, method: route.method)
        default:
            return route.run(StorageStore.UploadFaults(registry: retryTests, testID: testID)).hummingbirdResponse
        }
    }

    /// `POST /retry_test`, `GET` and `DELETE /retry_test/{id}`.
    private func retryTestAPI(_ call: APIRequest) -> APIResponse? {
        let path = call.rawPath
        if path == "/retry_test", call.method == "POST" {
            guard let body = call.jsonBody, let instructions = body["instructions"] as? [String: [String]], !instructions.isEmpty else {
                return APIResponse(status: 400, headers: [("Content-Type", "text/plain")], body: Data("instructions is not defined".utf8))
            }
            for instruction in instructions.values.joined() {
                do {
                    _ = try RetryInstruction.parse(instruction)
                } catch {
                    return APIResponse(status: 400, headers: [("Content-Type", "text/plain")], body: Data(error.message.utf8))
                }
            }
            let id = retryTests.create(instructions: instructions, transport: body["transport"] as? String ?? "HTTP")
            return StorageStore.json(retryTests.resource(id) ?? [:])
        }
        guard path.hasPrefix("/retry_test/") else { return nil }
        let id = String(path.dropFirst("/retry_test/".count))
        switch call.method {
        case "GET":
            guard let resource = retryTests.resource(id) else { return StorageStore.error(404, "No retry test \(id)") }
            return StorageStore.json(resource)
        case "DELETE":
            return retryTests.delete(id) ? APIResponse(status: 200, body: Data("Deleted \(id)".utf8)) : StorageStore.error(404, "No retry test \(id)")
        default:
            return nil
        }
    }

    /// The answer's head and its first `limit` body bytes, a pause of `seconds`, then the rest;
    /// the instruction is consumed when the pause begins. A body of `limit` bytes or fewer goes
    /// out whole, and the instruction stays, as the emulator's streamer does.
    private func stalled(_ answer: APIResponse, after limit: Int, seconds: Int, testID: String, method: String) -> Response {
        guard answer.body.count > limit else { return answer.hummingbirdResponse }
        var response = answer.hummingbirdResponse
        let registry = retryTests
        response.body = ResponseBody(contentLength: answer.body.count) { writer in
            try await writer.write(ByteBuffer(bytes: answer.body.prefix(limit)))
            registry.dequeue(testID, method: method)
            try await Task.sleep(for: .seconds(seconds))
            try await writer.write(ByteBuffer(bytes: answer.body.dropFirst(limit)))
            try await writer.finish(nil)
        }
        return response
    }

    /// The answer's head and its first `limit` body bytes, then the connection closes; the
    /// instruction is consumed once they are written. A shorter body goes out whole, and the
    /// instruction stays, as the emulator's streamer does.
    private func brokenStream(_ answer: APIResponse, after limit: Int, testID: String, method: String, channel: any Channel) -> Response {
        guard answer.body.count > limit else { return answer.hummingbirdResponse }
        var response = answer.hummingbirdResponse
        let head = answer.body.prefix(limit)
        let registry = retryTests
        response.body = ResponseBody(contentLength: answer.body.count) { writer in
            try await writer.write(ByteBuffer(bytes: head))
            registry.dequeue(testID, method: method)
            // Give the bytes to the kernel before the close, so the client reads them and then the end.
            try? await Task.sleep(for: .milliseconds(5))
            try? await channel.close().get()
            throw CancellationError()
        }
        return response
    }
}
