import CCurl

/// The progress counts of a transfer whose request has a progress handler. A box of its own,
/// made on the first report: most requests have no handler, and every waiting transfer would
/// carry the 40 bytes.
final class ProgressCounter {
    var progress = TransferProgress()
    /// The bytes moved when progress was last reported.
    var reportedAt: Int64 = 0
}

extension Transfer {
    /// Adds to the progress counters and reports at most every 64 KiB (and when a body ends).
    func reportProgress(sent: Int = 0, received: Int = 0) {
        let counter: ProgressCounter
        if let progressCounter { counter = progressCounter } else {
            counter = ProgressCounter()
            progressCounter = counter
        }
        counter.progress.bytesSent += Int64(sent)
        counter.progress.bytesReceived += Int64(received)
        if counter.progress.expectedBytes == nil, received > 0, let easy {
            var length: curl_off_t = -1
            courier_easy_getinfo_off(easy.raw, CURLINFO_CONTENT_LENGTH_DOWNLOAD_T, &length)
            if length >= 0 { counter.progress.expectedBytes = Int64(length) }
        }
        let moved = counter.progress.bytesSent + counter.progress.bytesReceived
        let finished = (sent == 0 && received == 0)
            || (requestBody?.length).map { counter.progress.bytesSent >= $0 && sent > 0 } == true
        if finished || moved - counter.reportedAt >= 64 << 10 {
            counter.reportedAt = moved
            request.progress?(counter.progress)
        }
    }
}
