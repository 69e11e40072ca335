import Testing
import WebPush

/// The memory of which push services delivered: bounded in time and in count.
@Suite struct DeliveredServicesTests {
    static func origin(_ index: Int) throws -> WebPushEndpointOrigin {
        try WebPushEndpointOrigin(endpoint: "https://push\(index).example/x")
    }

    @Test func aServiceCountsAsWorkingForADayAfterItDelivered() throws {
        var services = DeliveredServices()
        let start = ContinuousClock.now
        let origin = try Self.origin(1)
        #expect(!services.hasDelivered(origin, at: start), "never delivered: no credit")
        services.delivered(origin, at: start)
        #expect(services.hasDelivered(origin, at: start + DeliveredServices.memory))
        #expect(!services.hasDelivered(origin, at: start + DeliveredServices.memory + .seconds(1)))
    }

    @Test func pastItsCapacityTheLongestQuietAreForgotten() throws {
        var services = DeliveredServices()
        let start = ContinuousClock.now
        for index in 0...DeliveredServices.capacity {
            services.delivered(try Self.origin(index), at: start + .milliseconds(index))
        }
        #expect(services.count == DeliveredServices.capacity + 1 - DeliveredServices.capacity / 8)
        let now = start + .seconds(10)
        #expect(!services.hasDelivered(try Self.origin(0), at: now), "the oldest went")
        #expect(services.hasDelivered(try Self.origin(DeliveredServices.capacity), at: now), "the newest stays")
    }
}
