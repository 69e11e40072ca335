import Testing
@testable import PushCore

@Suite struct LengthFirstNamesTests {
    @Test func findsEachNameAmongOthersOfTheSameLength() {
        let names = LengthFirstNames(["id", "app", "tokens", "groups", "payload", "chunk", "é", "ab"])
        for (index, name) in names.names.enumerated() {
            #expect(names.index(of: name) == index, "\(name)")
        }
        #expect(names.index(of: "apps") == nil)
        #expect(names.index(of: "token") == nil)
        #expect(names.index(of: "") == nil)
        // Same UTF-8 length (2 bytes), different text.
        #expect(names.index(of: "è") == nil)
        #expect(names.count == 8)
    }

    @Test func appendAndRemoveKeepNamesAndLengthsTogether() {
        var names = LengthFirstNames()
        #expect(names.index(of: "a") == nil)
        names.append("consumer-1")
        names.append("c2")
        names.append("consumer-3")
        #expect(names.index(of: "consumer-3") == 2)
        names.remove(at: 0)
        #expect(names.names == ["c2", "consumer-3"])
        #expect(names.index(of: "consumer-3") == 1)
        #expect(names.index(of: "consumer-1") == nil)
        names.append("c2")
        #expect(names.index(of: "c2") == 0, "the first of a repeated name")
    }
}
