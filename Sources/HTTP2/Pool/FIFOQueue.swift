/// Array-backed FIFO with O(1) amortized pops from the front (the stdlib has no deque).
struct FIFOQueue<Element> {
    private var storage: [Element?] = []
    private var head = 0

    var count: Int { storage.count - head }
    var isEmpty: Bool { head == storage.count }
    var first: Element? { isEmpty ? nil : storage[head] }

    mutating func append(_ element: Element) { storage.append(element) }

    /// Puts a resubmitted request back in front so it keeps its place in line.
    mutating func prepend(_ element: Element) {
        if head > 0 {
            head -= 1
            storage[head] = element
        } else {
            storage.insert(element, at: 0)
        }
    }

    mutating func popFirst() -> Element? {
        guard head < storage.count else { return nil }
        let element = storage[head]
        storage[head] = nil
        head += 1
        if head == storage.count {
            storage.removeAll(keepingCapacity: true)
            head = 0
        } else if head >= 1024 && head * 2 >= storage.count {
            storage.removeFirst(head)
            head = 0
        }
        return element
    }
}
