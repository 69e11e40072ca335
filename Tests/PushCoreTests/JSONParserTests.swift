import Foundation
import Testing
@testable import PushCore

@Suite("JSONParser")
struct JSONParserTests {
    private func parse(_ text: String) throws(JSONSyntaxError) -> JSONValue {
        try JSONParser.parse(Array(text.utf8))
    }

    @Test("scalars keep their kind: 1 is a number, true a boolean, big integers become doubles")
    func scalars() throws {
        #expect(try parse("1") == .int(1))
        #expect(try parse("true") == .bool(true))
        #expect(try parse("false") == .bool(false))
        #expect(try parse(" null ") == .null)
        #expect(try parse("-0") == .int(0))
        #expect(try parse("-12") == .int(-12))
        #expect(try parse("9223372036854775807") == .int(Int64.max))
        #expect(try parse("9223372036854775808") == .double(9_223_372_036_854_775_808))
        #expect(try parse("5.0") == .double(5))
        #expect(try parse("1e3") == .double(1000))
        #expect(try parse("-2.5E-1") == .double(-0.25))
        #expect(try parse("0.5") == .double(0.5))
    }

    @Test("strings: every escape, surrogate pairs, raw UTF-8")
    func strings() throws {
        #expect(try parse(#""plain""#) == .string("plain"))
        #expect(try parse(#""q\" b\\ s\/ \b\f\n\r\t""#) == .string("q\" b\\ s/ \u{8}\u{c}\n\r\t"))
        #expect(try parse(#""\u00e9\u20AC""#) == .string("é€"))
        #expect(try parse(#""\ud83d\ude00 ok""#) == .string("😀 ok"))
        #expect(try parse("\"grüße 😀\"") == .string("grüße 😀"))
        #expect(try parse(#""""#) == .string(""))
    }

    @Test("objects and arrays, nested; a repeated member keeps its last value")
    func containers() throws {
        let value = try parse(#" { "a" : [1, "two", {"three": null}] , "b":{}, "c":[], "a2":true, "b":false } "#)
        #expect(value == .object([
            "a": .array([.int(1), .string("two"), .object(["three": .null])]),
            "b": .bool(false), "c": .array([]), "a2": .bool(true),
        ]))
    }

    @Test("the recorded top-level member's range points at its value's bytes, not a nested namesake's")
    func recordedRange() throws {
        let text = #"{"id":"x", "payload" : {"aps":{"alert":"{\"}"}} ,"n":[1,{"payload":2}]}"#
        let bytes = Array(text.utf8)
        var parser = JSONParser(bytes, recordingRangeOf: "payload")
        _ = try parser.parseDocument()
        let range = try #require(parser.recordedRange)
        #expect(String(decoding: bytes[range], as: UTF8.self) == #"{"aps":{"alert":"{\"}"}}"#)
        var other = JSONParser(bytes, recordingRangeOf: "missing")
        _ = try other.parseDocument()
        #expect(other.recordedRange == nil)
    }

    @Test("a checked-only member: its objects and arrays come back empty, its errors are the same", arguments: [
        (#"{"p":{"a":[1,{"b":"\q"}]}}"#, "invalid escape 'q' in a string at byte 19"),
        (#"{"p":[1,[2,]]}"#, "unexpected ']', expected a value at byte 11"),
        (#"{"p":{"a":01}}"#, "a number must not have a leading zero at byte 10"),
        ("{\"p\":{\"a\":\"x\u{1}\"}}", "a control character (0x1) inside a string must be escaped at byte 12"),
    ])
    func checkedOnly(_ text: String, _ message: String) throws {
        var built = JSONParser(Array(text.utf8), recordingRangeOf: "p")
        var checked = JSONParser(Array(text.utf8), recordingRangeOf: "p", buildsRecordedMember: false)
        for var parser in [built, checked] {
            do {
                _ = try parser.parseTopLevel()
                Issue.record("\(text) parsed")
            } catch {
                #expect(error.description == message)
            }
        }
        built = JSONParser(Array(#"{"p":{"a":[1,{"b":2}]},"q":[3]}"#.utf8), recordingRangeOf: "p")
        checked = JSONParser(Array(#"{"p":{"a":[1,{"b":2}]},"q":[3]}"#.utf8), recordingRangeOf: "p", buildsRecordedMember: false)
        guard case .members(let full) = try built.parseTopLevel(), case .members(let light) = try checked.parseTopLevel() else {
            Issue.record("not an object")
            return
        }
        #expect(full[0].value == .object(["a": .array([.int(1), .object(["b": .int(2)])])]))
        #expect(light[0].value == .object([:]))
        #expect(light[1].value == .array([.int(3)]))
        #expect(checked.recordedRange == built.recordedRange)
    }

    @Test("member(named:of:) parses one member: the last of a repeated name, nil when absent or not an object")
    func memberNamed() throws {
        let bytes = Array(#"{"aps":{"alert":"a"},"x":[1,{"y":2}],"aps":{"badge":1}}"#.utf8)
        #expect(try JSONParser.member(named: "aps", of: bytes) == .object(["badge": .int(1)]))
        #expect(try JSONParser.member(named: "x", of: bytes) == .array([.int(1), .object(["y": .int(2)])]))
        #expect(try JSONParser.member(named: "z", of: bytes) == nil)
        #expect(try JSONParser.member(named: "aps", of: Array("[1]".utf8)) == nil)
        #expect(PayloadObject(bytes: Array(#"{"\u0061ps":{"content-available":1}}"#.utf8))["aps"]
            == .object(["content-available": .int(1)]))
    }

    @Test("shape(ofMember:in:) gives the type and an object's member names, nothing built: the last of a repeated name")
    func shapeOfMember() throws {
        let bytes = Array(#"{"aps":{"alert":"a"},"x":[1,{"y":2}],"s":"t\u00e9","aps":{"badge":1,"\u0062adge":{"z":[]}}}"#.utf8)
        #expect(try JSONParser.shape(ofMember: "aps", in: bytes) == .object(memberNames: ["badge", "badge"]))
        #expect(try JSONParser.shape(ofMember: "x", in: bytes) == .array)
        #expect(try JSONParser.shape(ofMember: "s", in: bytes) == .string)
        #expect(try JSONParser.shape(ofMember: "z", in: bytes) == nil)
        #expect(try JSONParser.shape(ofMember: "aps", in: Array("[1]".utf8)) == nil)
        #expect(try JSONParser.shape(ofMember: "n", in: Array(#"{"n":-1.5e3}"#.utf8)) == .number)
        #expect(try JSONParser.shape(ofMember: "n", in: Array(#"{"n":null}"#.utf8)) == .null)
        #expect(try JSONParser.shape(ofMember: "n", in: Array(#"{"n":{}}"#.utf8)) == .object(memberNames: []))
        #expect(PayloadObject(bytes: Array(#"{"\u0061ps":{"content-available":1}}"#.utf8)).shape(of: "aps")
            == .object(memberNames: ["content-available"]))
    }

    @Test("shape(ofMember:in:) checks what it does not build: the same errors at the same offsets as a full parse",
          arguments: [#"{"aps":{"a":"x\q"}}"#, #"{"b":"é\q","aps":1}"#, "{\"aps\":{\"a\":\"\u{1}\"}}",
                      #"{"aps":{"a":"\ud800"}}"#, #"{"aps":[1,]}"#, #"{"aps":{"a":1}"#, #"{"s":"abc"#])
    func shapeErrors(text: String) {
        let bytes = Array(text.utf8)
        var full: JSONSyntaxError?
        do { _ = try JSONParser.parse(bytes) } catch { full = error }
        var shaped: JSONSyntaxError?
        do { _ = try JSONParser.shape(ofMember: "aps", in: bytes) } catch { shaped = error }
        #expect(full != nil)
        #expect(shaped?.description == full?.description)
    }

    // Foundation on Linux also accepts trailing commas ("[1,]"), which RFC 8259 does not; those
    // cases are in `errors` below.
    @Test("agrees with Foundation on what is valid JSON", arguments: [
        #"{"a":1}"#, #"[1,2,3]"#, #""x""#, "0", "-0.0e+1", #"{"a":{"b":[{"c":"\u0041"}]}}"#,
        "", " ", "{", "}", "01", "1.", ".5", "+1", "-", "1e", "0x10", "NaN", "Infinity",
        "tru", "nul", "[1 2]", #"{"a" 1}"#, #"{a:1}"#, "'a'", #""\x""#, #""\u12""#, "[]]", #"{"a":1}x"#, "\"a\tb\"",
    ])
    func agreesWithFoundation(_ text: String) {
        let ours = (try? parse(text)) != nil
        let foundation = (try? JSONSerialization.jsonObject(with: Data(text.utf8), options: [.fragmentsAllowed])) != nil
        #expect(ours == foundation, "\(text.debugDescription): ours \(ours), Foundation \(foundation)")
    }

    @Test("invalid documents name the problem and where", arguments: [
        ("", "unexpected end of input, expected a value at byte 0"),
        ("[1,]", "unexpected ']', expected a value at byte 3"),
        (#"{"a":1,}"#, "expected a member name in double quotes, found '}' at byte 7"),
        ("01", "a number must not have a leading zero at byte 0"),
        (#"{"a" 1}"#, "expected ':' after the member name \"a\", found '1' at byte 5"),
        ("[1 2]", "expected ',' or ']' in an array, found '2' at byte 3"),
        (#"{"a":1}x"#, "unexpected 'x' after the JSON value at byte 7"),
        ("\"a\u{1}b\"", "a control character (0x1) inside a string must be escaped at byte 2"),
        (#""\q""#, "invalid escape 'q' in a string at byte 1"),
        (#""\ud800x""#, "a \\u escape is an unpaired UTF-16 surrogate at byte 1"),
        (#""abc"#, "a string is not closed at byte 0"),
        ("1e999", "the number 1e999 is out of range at byte 0"),
    ])
    func errors(_ text: String, _ message: String) {
        #expect(throws: JSONSyntaxError.self) { try parse(text) }
        do {
            _ = try parse(text)
        } catch {
            #expect(error.description == message)
        }
    }

    @Test("invalid UTF-8 inside a string is an error, not a replacement character")
    func invalidUTF8() {
        let bytes: [UInt8] = [0x22, 0x61, 0xff, 0x62, 0x22]
        #expect(throws: JSONSyntaxError.self) { try JSONParser.parse(bytes) }
        let escaped: [UInt8] = Array(#""\n"#.utf8) + [0xc3] + [0x22]
        #expect(throws: JSONSyntaxError.self) { try JSONParser.parse(escaped) }
    }

    @Test("deep nesting is refused with an error instead of exhausting the stack")
    func depthLimit() throws {
        let allowed = String(repeating: "[", count: JSONParser.maxDepth) + String(repeating: "]", count: JSONParser.maxDepth)
        _ = try parse(allowed)
        let hostile = Array(repeating: UInt8(ascii: "["), count: 1_000_000)
        do {
            _ = try JSONParser.parse(hostile)
            Issue.record("a million open brackets parsed")
        } catch {
            #expect(error.description == "nested deeper than \(JSONParser.maxDepth) levels at byte \(JSONParser.maxDepth)")
        }
    }
}
