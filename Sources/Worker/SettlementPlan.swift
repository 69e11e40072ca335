import AMQP
import PushCore

/// What a job owes the broker once its devices were answered, decided from its tally alone: the
/// events, the retry of retryable devices, the outage wait, the held devices put back, and
/// job.completed, in the order they are published, plus what the consumption gate is told. A
/// value, so settlement is unit-tested without RabbitMQ; `JobProcessor.publish` carries it out
/// (publish everything with confirms, then ack).
struct SettlementPlan: Sendable {
    /// Events and copies of the job, published before job.completed.
    var messages: [ResultPublisher.Message] = []
    /// job.completed, when the configuration wants it for these counts: published last. Kept apart
    /// so a job that owes nothing else publishes it without making an array.
    var completion: ResultPublisher.Message?
    /// The app's credentials were refused: the gate holds its jobs.
    var credentialsRefused: String?
    /// The platform could not be reached: the gate pauses the app a moment.
    var platformUnreachable: String?
    /// The delay queue of each retry and outage wait, for the metrics.
    var delaysPublished: [Duration] = []

    /// Events counted as published once confirmed (job.completed included).
    var eventCount: Int { eventsInMessages + (completion == nil ? 0 : 1) }
    private var eventsInMessages = 0

    init(_ settlement: Settlement, configuration: WorkerConfiguration, time: UnixTime) {
        let job = settlement.job
        credentialsRefused = settlement.credentialsReason
        platformUnreachable = settlement.unavailableReason
        if !settlement.events.isEmpty { messages.reserveCapacity(settlement.events.count + 3) }
        for event in settlement.events {
            messages.append(.init(exchange: configuration.resultsExchange, routingKey: event.routingKey,
                                  body: event.body(jobID: job.id, app: job.app, time: time), properties: JobProcessor.eventProperties))
        }
        eventsInMessages = settlement.events.count
        let retryPolicy = configuration.retryPolicy(bulk: job.bulk)
        if !settlement.retryTokens.isEmpty,
           let queue = retryPolicy.delayQueue(afterAttempts: job.attempts + 1, atLeast: settlement.retryAfter) {
            let retry = job.derived(tokens: settlement.retryTokens, attempts: job.attempts + 1, chunk: job.chunk)
            append(retry, of: job, to: queue, configuration: configuration, time: time)
        }
        if !settlement.outageTokens.isEmpty, let queue = retryPolicy.delayQueue(forOutageWait: job.outageWaits + 1) {
            // Not the devices' fault either: their attempts stay, the waits are counted instead.
            let wait = job.derived(tokens: settlement.outageTokens, attempts: job.attempts, chunk: job.chunk, outageWaits: job.outageWaits + 1)
            append(wait, of: job, to: queue, configuration: configuration, time: time)
        }
        if !settlement.heldTokens.isEmpty {
            // Not the devices' fault: they wait in the job queue, attempts untouched, while the
            // app is held until its credentials work or its platform answers again.
            let held = job.derived(tokens: settlement.heldTokens, attempts: job.attempts, chunk: job.chunk)
            messages.append(.init(exchange: "", routingKey: configuration.queue(bulk: job.bulk), body: held.encoded(),
                                  properties: JobProcessor.jobProperties(id: job.id), mandatory: true))
        }
        if configuration.completionEvents.wants(settlement.counts, held: settlement.heldTokens.count) {
            let completed = PushEvent.jobCompleted(settlement.counts)
            completion = .init(exchange: configuration.resultsExchange, routingKey: completed.routingKey,
                               body: completed.body(jobID: job.id, app: job.app, time: time), properties: JobProcessor.eventProperties)
        }
    }

    /// `copy` (of `job`'s devices) to a delay queue.
    private mutating func append(_ copy: PushJob, of job: PushJob, to queue: (name: String, delay: Duration),
                                 configuration: WorkerConfiguration, time: UnixTime) {
        var properties = JobProcessor.jobProperties(id: job.id)
        let route = configuration.delayRoute(queue, bulk: job.bulk, properties: &properties, now: time)
        delaysPublished.append(queue.delay)
        messages.append(.init(exchange: "", routingKey: route, body: copy.encoded(), properties: properties, mandatory: true))
    }
}
