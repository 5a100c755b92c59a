import Foundation

/// Keeps a streamed transfer alive while its body is referenced; cancels it when dropped unfinished.
final class ResponseStreamHandle: ResponseBodySource {
    let service: ServiceActor
    let transfer: LoopBound<Transfer>
    let buffer: LoopBound<ResponseBodyBuffer>

    init(service: ServiceActor, transfer: LoopBound<Transfer>, buffer: LoopBound<ResponseBodyBuffer>) {
        self.service = service
        self.transfer = transfer
        self.buffer = buffer
        LiveObjects.created(.streamHandle)
    }

    func next() async throws -> [Data]? {
        try await service.nextChunks(transfer, buffer)
    }

    deinit {
        LiveObjects.destroyed(.streamHandle)
        let transfer = transfer
        service.loop.execute {
            transfer.value.cancel(with: TransportError(.cancelled, message: "response body dropped before its end"))
        }
    }
}
