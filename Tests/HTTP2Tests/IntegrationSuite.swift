import Testing

/// Every test that starts servers runs in here, one at a time: the timing assertions
/// (timeouts, PING, idle close) should not compete with a 500-request burst for two cores.
@Suite(.serialized) enum IntegrationSuite {}
