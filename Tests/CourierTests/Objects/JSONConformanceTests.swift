@testable import Courier
import Foundation
import Testing

/// Courier's JSON parser against JSONTestSuite (Tests/Conformance/JSONTestSuite, pinned, MIT), as
/// data: each `y_` file must parse, and what it parses to must survive being written and read
/// again; each `n_` file must fail with a typed error, never a trap; each `i_` file, which
/// RFC 8259 leaves to the parser, must do what ``implementationDefined`` pins down.
@Suite struct JSONConformanceTests {
    static let folder = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("Conformance/JSONTestSuite/test_parsing")

    static let files: [String] = ((try? FileManager.default.contentsOfDirectory(atPath: folder.path)) ?? [])
        .filter { $0.hasSuffix(".json") }.sorted()

    static func parse(_ name: String) throws(JSONParsingError) -> JSONValue {
        let data = FileManager.default.contents(atPath: folder.appendingPathComponent(name).path) ?? Data()
        return try JSONValue(parsing: data)
    }

    /// Courier's choice for each case RFC 8259 leaves open: accepted, or the kind of error.
    /// - Numbers are read as the nearest `Double`, as JavaScript reads them, so one too small for
    ///   a `Double` is 0; one too large would be infinite, which JSON cannot write back, so it is an
    ///   error. Integers beyond 64 bits are kept exactly, as their text.
    /// - Text is UTF-8 (RFC 8259 section 8.1), with a byte order mark tolerated; a `\u` escape of
    ///   half a surrogate pair has no Unicode scalar, so Swift's `String` cannot hold it.
    /// - Nesting is bounded (`JSONLimits.maxDepth`, 256 by default).
    static let implementationDefinedOutcomes: [String: String] = [
        "i_number_double_huge_neg_exp.json": "accepted", "i_number_real_underflow.json": "accepted",
        "i_number_too_big_neg_int.json": "accepted", "i_number_too_big_pos_int.json": "accepted",
        "i_number_very_big_negative_int.json": "accepted", "i_structure_UTF-8_BOM_empty_object.json": "accepted",
        "i_number_huge_exp.json": "invalidNumber", "i_number_neg_int_huge_exp.json": "invalidNumber",
        "i_number_pos_double_huge_exp.json": "invalidNumber", "i_number_real_neg_overflow.json": "invalidNumber",
        "i_number_real_pos_overflow.json": "invalidNumber",
        "i_string_UTF-8_invalid_sequence.json": "invalidUTF8", "i_string_UTF8_surrogate_U+D800.json": "invalidUTF8",
        "i_string_invalid_utf-8.json": "invalidUTF8", "i_string_iso_latin_1.json": "invalidUTF8",
        "i_string_lone_utf8_continuation_byte.json": "invalidUTF8", "i_string_not_in_unicode_range.json": "invalidUTF8",
        "i_string_overlong_sequence_2_bytes.json": "invalidUTF8", "i_string_overlong_sequence_6_bytes.json": "invalidUTF8",
        "i_string_overlong_sequence_6_bytes_null.json": "invalidUTF8", "i_string_truncated-utf-8.json": "invalidUTF8",
        "i_object_key_lone_2nd_surrogate.json": "invalidUTF8", "i_string_1st_surrogate_but_2nd_missing.json": "invalidUTF8",
        "i_string_1st_valid_surrogate_2nd_invalid.json": "invalidUTF8",
        "i_string_incomplete_surrogate_and_escape_valid.json": "invalidUTF8",
        "i_string_incomplete_surrogate_pair.json": "invalidUTF8", "i_string_incomplete_surrogates_escape_valid.json": "invalidUTF8",
        "i_string_invalid_lonely_surrogate.json": "invalidUTF8", "i_string_invalid_surrogate.json": "invalidUTF8",
        "i_string_inverted_surrogates_U+1D11E.json": "invalidUTF8", "i_string_lone_second_surrogate.json": "invalidUTF8",
        "i_string_utf16BE_no_BOM.json": "syntax", "i_string_utf16LE_no_BOM.json": "syntax",
        "i_string_UTF-16LE_with_BOM.json": "syntax", "i_structure_500_nested_arrays.json": "tooDeep",
    ]

    @Test func theSuiteIsAllThere() {
        // 95 y_, 188 n_ and 35 i_ files in the pinned commit: a lost folder would pass nothing.
        #expect(Self.files.filter { $0.hasPrefix("y_") }.count == 95)
        #expect(Self.files.filter { $0.hasPrefix("n_") }.count == 188)
        #expect(Set(Self.files.filter { $0.hasPrefix("i_") }) == Set(Self.implementationDefinedOutcomes.keys))
    }

    @Test(arguments: files.filter { $0.hasPrefix("y_") })
    func accepts(_ name: String) throws {
        let value = try Self.parse(name)
        #expect(try JSONValue(parsing: value.serialized()) == value, "written and read again")
    }

    @Test(arguments: files.filter { $0.hasPrefix("n_") })
    func rejects(_ name: String) {
        #expect(throws: JSONParsingError.self) { _ = try Self.parse(name) }
    }

    @Test(arguments: files.filter { $0.hasPrefix("i_") })
    func implementationDefined(_ name: String) {
        let outcome: String
        do throws(JSONParsingError) {
            _ = try Self.parse(name)
            outcome = "accepted"
        } catch {
            outcome = error.kind
        }
        #expect(outcome == Self.implementationDefinedOutcomes[name])
    }

    @Test func numbersBeyondADoubleAreKeptReadAsTheNearestOrRefused() throws {
        // Integers beyond 64 bits keep their digits; a decimal too small for a Double is its nearest, 0.
        #expect(try Self.parse("i_number_too_big_pos_int.json")[0]?.numberValue?.description == "100000000000000000000")
        #expect(try Self.parse("i_number_real_underflow.json")[0]?.doubleValue == 0)
    }
}
