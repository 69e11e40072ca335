import PushCore

/// The connection's consumers by tag, in the order they were added (tags are never removed:
/// a stopped consumer's tag is given back to the next consumer of its queue). A connection has one
/// or a few and looks one up twice per delivery (its body limit, then its handler), hence a
/// `LengthFirstNames` scan rather than a dictionary.
struct ConsumerTable {
    private var tagList = LengthFirstNames()
    private var consumers: [ConnectionLoop.Consumer] = []
    /// Tags whose basic.consume was sent and not answered, oldest first (`consumeRefused`).
    var unansweredConsumes: [String] = []

    var tags: [String] { tagList.names }
    var count: Int { tagList.count }
    var values: [ConnectionLoop.Consumer] { consumers }

    subscript(tag: String) -> ConnectionLoop.Consumer? {
        get { tagList.index(of: tag).map { consumers[$0] } }
        set {
            switch (tagList.index(of: tag), newValue) {
            case let (index?, consumer?): consumers[index] = consumer
            case let (index?, nil):
                tagList.remove(at: index)
                consumers.remove(at: index)
            case let (nil, consumer?):
                tagList.append(tag)
                consumers.append(consumer)
            case (nil, nil): break
            }
        }
    }
}
