/// The connection's consumers by tag, in the order they were added (tags are never removed:
/// a stopped consumer's tag is given back to the next consumer of its queue). A connection has one
/// or a few and looks one up twice per delivery (its body limit, then its handler): a scan
/// comparing lengths first costs less than hashing the tag each time (`ops/count-instructions`:
/// ~1,000 instructions a one-token job).
struct ConsumerTable {
    private(set) var tags: [String] = []
    private var consumers: [ConnectionLoop.Consumer] = []

    var count: Int { tags.count }
    var values: [ConnectionLoop.Consumer] { consumers }

    private func index(of tag: String) -> Int? {
        let length = tag.utf8.count
        return tags.firstIndex { $0.utf8.count == length && $0 == tag }
    }

    subscript(tag: String) -> ConnectionLoop.Consumer? {
        get { index(of: tag).map { consumers[$0] } }
        set {
            switch (index(of: tag), newValue) {
            case let (index?, consumer?): consumers[index] = consumer
            case let (index?, nil):
                tags.remove(at: index)
                consumers.remove(at: index)
            case let (nil, consumer?):
                tags.append(tag)
                consumers.append(consumer)
            case (nil, nil): break
            }
        }
    }
}
