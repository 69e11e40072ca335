import AMQP
import Testing
@testable import Worker

@Suite struct RedeliveryCounterTests {
    /// A quorum queue's own count is used when it is there (it needs no Redis); classic queues
    /// carry none and fall back to the count kept in Redis.
    @Test func theBrokersDeliveryCountIsReadFromQuorumQueueHeaders() {
        #expect(RedeliveryCounter.brokerDeliveryCount(["x-delivery-count": .int(3)]) == 3)
        #expect(RedeliveryCounter.brokerDeliveryCount([:]) == nil)
        #expect(RedeliveryCounter.brokerDeliveryCount(["x-delivery-count": .int(0)]) == nil)
        #expect(RedeliveryCounter.brokerDeliveryCount(["x-delivery-count": .string("3")]) == nil)
    }
}
