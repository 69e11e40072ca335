/// Work handed to an owner thread. It lives inside its client's locked state, because the same lock
/// guards the client's lifecycle: work is refused atomically once shutdown began. One wake-up rule
/// for every owner: a caller signals the `WakeSignal` only when the owner said it is about to block
/// (`ownerWillWait`), so while the owner runs, queued work costs callers no system call. The owner
/// takes everything at the top of each pass, and polls without blocking if work came meanwhile.
public struct OwnerInbox<Item> {
    private var items: [Item] = []
    private var ownerWaiting = false

    public init() {}

    public var count: Int { items.count }
    public var isEmpty: Bool { items.isEmpty }

    /// Queues `item`; true when the caller must signal the owner (after leaving the lock).
    public mutating func post(_ item: Item) -> Bool {
        items.append(item)
        return wakeOwnerIfWaiting()
    }

    /// For news kept outside the inbox (a shutdown request, a DNS answer): true when the caller
    /// must signal the owner.
    public mutating func wakeOwnerIfWaiting() -> Bool {
        guard ownerWaiting else { return false }
        ownerWaiting = false
        return true
    }

    /// Owner, just before it blocks in poll(): false when work is already waiting (in the inbox, or
    /// `otherWorkWaiting` outside it), and then it must not block.
    public mutating func ownerWillWait(otherWorkWaiting: Bool = false) -> Bool {
        guard items.isEmpty, !otherWorkWaiting else { return false }
        ownerWaiting = true
        return true
    }

    /// Owner, just before a wait that ends on its own within a few milliseconds: callers need not
    /// signal, the owner takes their work when the wait ends. False when work is already waiting.
    public mutating func ownerWillPause(otherWorkWaiting: Bool = false) -> Bool {
        guard items.isEmpty, !otherWorkWaiting else { return false }
        ownerWaiting = false
        return true
    }

    /// Owner, after poll() returned: it runs now, so the next item needs no wake-up.
    public mutating func ownerIsRunning() {
        ownerWaiting = false
    }

    /// Owner: everything queued, swapped into `buffer` (empty on entry; both keep their capacity).
    public mutating func takeAll(into buffer: inout [Item]) {
        ownerWaiting = false
        swap(&items, &buffer)
    }

    /// Owner: at most `limit` items in arrival order, so a flood cannot starve its other work;
    /// `more` says whether some are left.
    public mutating func take(limit: Int) -> (items: [Item], more: Bool) {
        ownerWaiting = false
        guard items.count > limit else {
            defer { items.removeAll(keepingCapacity: true) }
            return (items, false)
        }
        let batch = Array(items.prefix(limit))
        items.removeFirst(limit)
        return (batch, true)
    }

    /// Everything left, to fail it when the owner stops.
    public mutating func removeAll() -> [Item] {
        defer { items = [] }
        return items
    }
}

extension OwnerInbox: Sendable where Item: Sendable {}
