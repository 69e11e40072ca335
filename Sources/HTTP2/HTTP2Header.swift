/// One header field. `neverIndex` keeps the value out of HPACK tables on every hop
/// (use it for bearer tokens and device tokens).
public struct HTTP2Header: Sendable, Hashable {
    public var name: String
    public var value: String
    public var neverIndex: Bool

    public init(name: String, value: String, neverIndex: Bool = false) {
        self.name = name
        self.value = value
        self.neverIndex = neverIndex
    }
}
