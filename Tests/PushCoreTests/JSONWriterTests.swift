import Foundation
import Testing
@testable import PushCore

@Suite("JSONWriter")
struct JSONWriterTests {
    @Test("an empty object")
    func empty() {
        var writer = JSONWriter()
        #expect(text(writer.finish()) == "{}")
    }

    @Test("fields are comma-separated in the order written")
    func layout() {
        var writer = JSONWriter()
        writer.field("a", "x")
        writer.field("b", 1)
        writer.field("c", strings: ["p", "q"])
        writer.field("d", rawJSON: Array(#"{"k":[1]}"#.utf8))
        writer.rawField("e", "true")
        writer.field("f", nil as String?)
        writer.field("g", nil as Int?)
        writer.field("h", strings: [])
        #expect(text(writer.finish()) == #"{"a":"x","b":1,"c":["p","q"],"d":{"k":[1]},"e":true,"f":null,"g":null,"h":[]}"#)
    }

    @Test("integers are written as their decimal digits", arguments: [0, 7, 10, 1234567890, -1, -45, Int.max, Int.min])
    func integers(_ value: Int) {
        var writer = JSONWriter()
        writer.field("n", value)
        #expect(text(writer.finish()) == "{\"n\":\(value)}")
    }

    @Test("quotes, backslashes and control characters are escaped")
    func escaping() {
        var writer = JSONWriter()
        writer.field("s", "a\"b\\c\nd\re\tf\u{0}g\u{1}h\u{8}i\u{c}j\u{1f}k/")
        #expect(text(writer.finish()) == #"{"s":"a\"b\\c\nd\re\tf\u0000g\u0001h\u0008i\u000cj\u001fk/"}"#)
    }

    @Test("names that are data are escaped too")
    func keyEscaping() throws {
        var writer = JSONWriter()
        writer.field(named: "we\"ird\\key\n", "v")
        let object = try jsonObject(writer.finish())
        #expect(object["we\"ird\\key\n"] as? String == "v")
    }

    @Test("non-ASCII passes through as UTF-8, unescaped")
    func unicode() {
        var writer = JSONWriter()
        writer.field("s", "é ü 漢字 😀 \u{7f} \u{2028}")
        #expect(text(writer.finish()) == "{\"s\":\"é ü 漢字 😀 \u{7f} \u{2028}\"}")
    }

    static let awkwardStrings = [
        "", "plain", "\"", "\\", "\\\"", "line\nbreak", "\r\n", "tab\there", "\u{0}", "\u{1}\u{2}\u{3}\u{1e}\u{1f}",
        "\u{7f}", "é", "😀👍🏽", "</script>", "{\"not\":\"json\"}", "\\u0041",
    ]

    @Test("output parses with JSONSerialization to the same values", arguments: awkwardStrings)
    func parsesBack(_ value: String) throws {
        var writer = JSONWriter()
        writer.field(named: value, value)
        writer.field("list", strings: [value, value + "x"])
        writer.field("n", -42)
        let object = try jsonObject(writer.finish())
        #expect(object[value] as? String == value)
        #expect(object["list"] as? [String] == [value, value + "x"])
        #expect(object["n"] as? Int == -42)
    }

    @Test("integers at the extremes")
    func integers() throws {
        var writer = JSONWriter()
        writer.field("min", Int(Int32.min))
        writer.field("max", Int(Int32.max))
        writer.field("ms", 1_795_293_540_123)
        writer.field("zero", 0)
        let object = try jsonObject(writer.finish())
        #expect(object["min"] as? Int == Int(Int32.min))
        #expect(object["max"] as? Int == Int(Int32.max))
        #expect(object["ms"] as? Int == 1_795_293_540_123)
        #expect(object["zero"] as? Int == 0)
    }

    @Test("finite doubles")
    func doubles() throws {
        var writer = JSONWriter()
        writer.field("half", 0.5)
        writer.field("big", 1e20)
        writer.field("neg", -2.25)
        let object = try jsonObject(writer.finish())
        #expect(object["half"] as? Double == 0.5)
        #expect(object["big"] as? Double == 1e20)
        #expect(object["neg"] as? Double == -2.25)
    }
}
