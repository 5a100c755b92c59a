import CourierGenerator
import CourierTestSupport
import Foundation
import Testing

/// The committed Discovery fuzz corpus (Fuzz/corpus/discovery), replayed through the fuzz
/// target's own check on every `make test`; `make fuzz` runs libFuzzer to grow it.
@Suite struct DiscoveryFuzzCorpusTests {
    @Test func discoveryDocumentsGenerateOrFailTyped() throws {
        let inputs = try Repository.fuzzCorpus("discovery")
        #expect(!inputs.isEmpty)
        for (name, data) in inputs {
            do {
                #expect(try Generator.generate(discovery: data, moduleName: "Fuzzed").files.count == 3, "\(name)")
            } catch {
                #expect(error is GeneratorError, "\(name): \(error)")
            }
        }
    }
}
