import PushCore

/// A JSON array of flat objects, each written by `write` into its own `JSONWriter` (which writes
/// objects only).
func jsonArray<Element>(_ elements: [Element], _ write: (Element, inout JSONWriter) -> Void) -> [UInt8] {
    var array: [UInt8] = [UInt8(ascii: "[")]
    for (index, element) in elements.enumerated() {
        if index > 0 { array.append(UInt8(ascii: ",")) }
        var object = JSONWriter()
        write(element, &object)
        array.append(contentsOf: object.finish())
    }
    array.append(UInt8(ascii: "]"))
    return array
}
