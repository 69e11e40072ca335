/// The bounded record: once full, each new notification overwrites the oldest.
struct NotificationRing {
    private var storage: [ReceivedNotification] = []
    private var head = 0
    let limit: Int

    init(limit: Int) {
        self.limit = max(0, limit)
    }

    mutating func append(_ notification: ReceivedNotification) {
        guard self.limit > 0 else { return }
        if self.storage.count < self.limit {
            self.storage.append(notification)
        } else {
            self.storage[self.head] = notification
            self.head = (self.head + 1) % self.limit
        }
    }

    /// Oldest first.
    var ordered: [ReceivedNotification] {
        guard self.head > 0 else { return self.storage }
        return Array(self.storage[self.head...] + self.storage[..<self.head])
    }

    mutating func removeAll() {
        self.storage.removeAll()
        self.head = 0
    }
}
