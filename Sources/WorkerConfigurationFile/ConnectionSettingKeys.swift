import APNs
import FCM
import Foundation
import HTTP2
import WebPush

/// Where each platform's configuration keeps the connection settings every app entry may give
/// (`max_connections`, `request_timeout`, `proxy`, …), so that one function applies them all.
struct ConnectionSettingKeys<Configuration> {
    var maxConnections: WritableKeyPath<Configuration, Int>
    var maxStreams: WritableKeyPath<Configuration, Int>
    var notificationsPerSecond: WritableKeyPath<Configuration, Int?>?
    var pruneInvalidTokens: WritableKeyPath<Configuration, Bool>
    var pingInterval: WritableKeyPath<Configuration, Duration>
    var idleTimeout: WritableKeyPath<Configuration, Duration>
    var requestTimeout: WritableKeyPath<Configuration, Duration>
    var connectTimeout: WritableKeyPath<Configuration, Duration>
    var extraCAFile: WritableKeyPath<Configuration, String?>
    var proxy: WritableKeyPath<Configuration, HTTPProxy?>

    static var apns: ConnectionSettingKeys<APNsConfiguration> {
        .init(maxConnections: \.maxConnections, maxStreams: \.maxStreamsPerConnection,
              notificationsPerSecond: \.maxNotificationsPerSecondPerConnection, pruneInvalidTokens: \.pruneInvalidTokens,
              pingInterval: \.idlePingInterval, idleTimeout: \.idleConnectionTimeout, requestTimeout: \.requestTimeout,
              connectTimeout: \.connectTimeout, extraCAFile: \.extraCAFile, proxy: \.proxy)
    }

    static var webPush: ConnectionSettingKeys<WebPushConfiguration> {
        .init(maxConnections: \.maxConnectionsPerOrigin, maxStreams: \.maxStreamsPerConnection,
              notificationsPerSecond: \.maxNotificationsPerSecondPerConnection, pruneInvalidTokens: \.pruneInvalidTokens,
              pingInterval: \.idlePingInterval, idleTimeout: \.idleConnectionTimeout, requestTimeout: \.requestTimeout,
              connectTimeout: \.connectTimeout, extraCAFile: \.extraCAFile, proxy: \.proxy)
    }

    /// FCM has no per-connection rate setting: its client throttles itself after 429s.
    static var fcm: ConnectionSettingKeys<FCMConfiguration> {
        .init(maxConnections: \.maxConnections, maxStreams: \.maxStreamsPerConnection,
              notificationsPerSecond: nil, pruneInvalidTokens: \.pruneInvalidTokens,
              pingInterval: \.idlePingInterval, idleTimeout: \.idleConnectionTimeout, requestTimeout: \.requestTimeout,
              connectTimeout: \.connectTimeout, extraCAFile: \.extraCAFile, proxy: \.proxy)
    }

    /// Applies what `app` gives; the defaults stay for the rest. `fail(field, message)` records a
    /// problem (an unreadable CA file, a bad proxy URL).
    func apply(_ app: AppEntry, to configuration: inout Configuration, fail: (String, String) -> Void) {
        configuration[keyPath: extraCAFile] = app.caFile
        if let caFile = app.caFile, !FileManager.default.isReadableFile(atPath: caFile) { fail("ca_file", "cannot read \(caFile)") }
        if let value = app.maxConnections { configuration[keyPath: maxConnections] = value }
        if let value = app.maxStreams { configuration[keyPath: maxStreams] = value }
        if let notificationsPerSecond { configuration[keyPath: notificationsPerSecond] = app.notificationsPerSecond }
        configuration[keyPath: pruneInvalidTokens] = app.pruneInvalidTokens ?? false
        if let value = app.pingInterval { configuration[keyPath: pingInterval] = value }
        if let value = app.idleTimeout { configuration[keyPath: idleTimeout] = value }
        if let value = app.requestTimeout { configuration[keyPath: requestTimeout] = value }
        if let value = app.connectTimeout { configuration[keyPath: connectTimeout] = value }
        if let text = app.proxy {
            do { configuration[keyPath: proxy] = try ProxyURL.parse(text) } catch { fail("proxy", error.message) }
        }
    }
}
