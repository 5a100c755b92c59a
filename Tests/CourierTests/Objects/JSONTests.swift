@testable import Courier
import Foundation
import CourierTestSupport
import Testing

@Suite struct JSONTests {
    @Test func keepsMemberOrderAndUnknownMembersThroughARoundTrip() throws {
        let text = #"{"zeta":1,"alpha":{"y":2,"x":1},"mid":[true,false,null],"s":"é\n\"q\""}"#
        let value = try JSONValue(parsing: text)
        #expect(value.objectValue?.keys == ["zeta", "alpha", "mid", "s"])
        #expect(value["alpha"]?.objectValue?.keys == ["y", "x"])
        #expect(String(decoding: value.serialized(), as: UTF8.self) == text)
    }

    @Test func keepsIntegersBeyondTwoToThe53Exactly() throws {
        let value = try JSONValue(parsing: #"[9007199254740993, -9223372036854775808, 18446744073709551615, 123456789012345678901234567890, 1.5, -0.25e2]"#)
        #expect(value[0]?.int64Value == 9_007_199_254_740_993)
        #expect(value[1]?.int64Value == .min)
        #expect(value[2]?.numberValue?.uint64Value == .max)
        #expect(value[3]?.numberValue?.description == "123456789012345678901234567890")
        #expect(value[4]?.doubleValue == 1.5)
        #expect(value[5]?.doubleValue == -25)
        #expect(String(decoding: value.serialized(), as: UTF8.self)
            == "[9007199254740993,-9223372036854775808,18446744073709551615,123456789012345678901234567890,1.5,-25]")
    }

    @Test func decodesEscapesAndSurrogatePairs() throws {
        let value = try JSONValue(parsing: #""a\u00e9\ud83d\ude00\t\/\\""#)
        #expect(value.stringValue == "aé😀\t/\\")
        let back = try JSONValue(parsing: String(decoding: value.serialized(), as: UTF8.self))
        #expect(back == value)
    }

    @Test func controlCharactersAreEscapedWhenWritten() {
        let value = JSONValue.string("line\u{1}end")
        #expect(String(decoding: value.serialized(), as: UTF8.self) == #""line\u0001end""#)
    }

    @Test(arguments: [
        (#"{"a":1"#, JSONParsingError.truncated),
        (#"{"a":"unterminated"#, .truncated),
        (#"[1,2"#, .truncated),
        (#"{"a" 1}"#, .syntax),
        (#"{"a":01}"#, .invalidNumber),
        (#"[1,]"#, .syntax),
        (#"{"a":tru}"#, .syntax),
        (#"{"a":1} x"#, .syntax),
        (#"{"a":"\q"}"#, .syntax),
        (#""\ud800""#, .invalidUTF8),
        ("", .truncated),
        (#"{"a":1e999}"#, .invalidNumber),
    ])
    func malformedJSONIsATypedError(text: String, expected: JSONParsingError) {
        #expect(throws: expected) { try JSONValue(parsing: text) }
    }

    @Test func invalidUTF8InAStringIsRejected() {
        var bytes = Array(#"{"a":"x"#.utf8)
        bytes += [0xFF, 0xFE]
        bytes += Array(#""}"#.utf8)
        #expect(throws: JSONParsingError.invalidUTF8) { try JSONValue(parsing: Data(bytes)) }
    }

    @Test func deepNestingIsRejectedNotAStackOverflow() {
        let deep = String(repeating: "[", count: 10_000) + String(repeating: "]", count: 10_000)
        #expect(throws: JSONParsingError.tooDeep) { try JSONValue(parsing: deep) }
        let ok = String(repeating: "[", count: 100) + String(repeating: "]", count: 100)
        #expect(throws: Never.self) { try JSONValue(parsing: ok) }
    }

    @Test func sizeLimitIsEnforced() {
        #expect(throws: JSONParsingError.tooLarge) {
            try JSONValue(parsing: Data(count: 100), limits: JSONLimits(maxBytes: 10))
        }
    }

    @Test func numbersCompareByValue() {
        #expect(JSONValue.number(1) == JSONValue.number(1.0))
        #expect(Set([JSONValue.number(1), .number(1.0)]).count == 1)
        #expect(JSONValue.number(1) != JSONValue.number(1.5))
    }

    @Test func literalsBuildValues() {
        let value: JSONValue = ["a": [1, "two", nil, true], "b": ["c": 2.5]]
        #expect(value["a"]?[1]?.stringValue == "two")
        #expect(value["a"]?[2]?.isNull == true)
        #expect(value["b"]?["c"]?.doubleValue == 2.5)
    }

    @Test func codableInteropThroughFoundation() throws {
        let value: JSONValue = ["a": [1, 2], "b": "x", "c": nil]
        let data = try JSONEncoder().encode(value)
        #expect(try JSONDecoder().decode(JSONValue.self, from: data) == value)
    }
}
