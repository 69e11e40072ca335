import AMQP
import APNs
import PushCore
import Redis
import Worker

/// The built-in defaults, read from the configurations that own them, so that help texts never
/// drift from what the worker does.
public enum Defaults {
    public static let worker = WorkerConfiguration(amqp: AMQPConfiguration(url: WorkerSettings.defaultAMQPURL), redis: redis, apps: [:])
    /// Placeholder credentials: nothing is loaded until a connection is made, and none is.
    public static let apns = APNsConfiguration(credentials: .certificate(.pem(certificateFile: "", privateKeyFile: "")), topic: nil)

    private static var redis: RedisConfiguration {
        // A constant URL that parses; a failure here is a programming error.
        try! RedisConfiguration(url: WorkerSettings.defaultRedisURL)
    }

    /// `30s` as whole seconds, as the options count them.
    public static func seconds(_ duration: Duration) -> Int64 { duration.components.seconds }
    public static var retryDelays: String { worker.retry.delays.map(DurationText.format).joined(separator: ",") }
}
