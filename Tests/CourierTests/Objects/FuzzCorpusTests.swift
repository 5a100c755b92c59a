import Courier
import CourierTestSupport
import Foundation
import Testing

/// The committed fuzz corpora (Fuzz/corpus), replayed through the fuzz targets' own checks on
/// every `make test`; `make fuzz` runs libFuzzer to grow them.
@Suite struct FuzzCorpusTests {
    @Test func jsonRoundTrips() throws {
        let inputs = try Repository.fuzzCorpus("json")
        #expect(!inputs.isEmpty)
        for (name, data) in inputs {
            guard let value = try? JSONValue(parsing: data, limits: JSONLimits(maxDepth: 64, maxBytes: 1 << 20)) else { continue }
            #expect(try JSONValue(parsing: value.serialized()) == value, "\(name)")
        }
    }

    @Test func uriTemplateValuesStayInTheirSegment() throws {
        let inputs = try Repository.fuzzCorpus("uritemplate")
        #expect(!inputs.isEmpty)
        for (name, data) in inputs {
            var lines = String(decoding: data, as: UTF8.self).split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
            let template = URITemplate(lines.removeFirst())
            var variables: [String: String] = [:]
            for line in lines {
                let parts = line.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
                variables[String(parts[0])] = parts.count > 1 ? String(parts[1]) : ""
            }
            _ = try? template.expand(variables)
            if let value = variables["v"] {
                let expanded = try URITemplate("a/{v}/b").expand(["v": value])
                #expect(expanded.split(separator: "/", omittingEmptySubsequences: false).count == 3, "\(name): \(expanded)")
                let list = URITemplate.Value.list(value.split(separator: ",", omittingEmptySubsequences: false).map(String.init))
                for expanded in [try URITemplate("o/{+v}").expand(["v": value]), try URITemplate("o{/v*}").expand(["v": list])] {
                    let path = expanded.prefix { $0 != "?" && $0 != "#" }
                    #expect(!path.split(separator: "/", omittingEmptySubsequences: false).contains { $0 == "." || $0 == ".." }, "\(name): \(expanded)")
                }
            }
        }
    }
}

/// Numbers that do not fit the declared type read as nil, never as a wrapped or rounded value.
@Suite struct OverflowTests {
    @Test func integersTooLargeForTheirTypeAreNil() throws {
        let object = GenericObject(json: try JSONValue(parsing: Data(#"""
            {"big":"99999999999999999999","huge":123456789012345678901234567890,"i32":3000000000,"neg":-1,"frac":1.5,"ok":"42"}
            """#.utf8)).objectValue!)
        let big: Int64? = object["big"]
        let huge: Int64? = object["huge"]
        let i32: Int32? = object["i32"]
        let negative: UInt64? = object["neg"]
        let fraction: Int? = object["frac"]
        let fine: Int64? = object["ok"]
        #expect(big == nil && huge == nil && i32 == nil && negative == nil && fraction == nil)
        #expect(fine == 42)
        #expect(object.json["huge"]?.description.contains("123456789012345678901234567890") == true) // kept exactly
    }
}
