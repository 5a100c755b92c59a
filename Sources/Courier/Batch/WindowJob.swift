/// One kind of job for a ``ResultWindow``: a value with a method rather than a closure, so that
/// a worker's call to it is specialised (and inlined) instead of costing a closure's frames.
protocol WindowJob: Sendable {
    associatedtype Output: Sendable
    /// Runs job `index`; it never throws.
    func run(_ index: Int) async -> Result<Output, any Error>
    /// The result of job `index` when it never started (cancellation, `failFast`).
    func skipped(_ index: Int) async -> Result<Output, any Error>
}

extension WindowJob {
    func skipped(_ index: Int) async -> Result<Output, any Error> { .failure(CancellationError()) }
}
