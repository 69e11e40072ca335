import HTTP2
import PushCore

/// `http://[user:password@]host:port`, the HTTP CONNECT proxy APNs connections go through.
public enum ProxyURL {
    /// The message never repeats the URL: it may hold the proxy's password.
    public static func parse(_ text: String) throws(SettingError) -> HTTPProxy {
        do throws(ServiceURLError) {
            let parsed = try ServiceURL(parsing: text, schemes: ["http"])
            guard !parsed.host.isEmpty, let port = parsed.port else { throw ServiceURLError("it needs a host and a port: http://[user:password@]host:port") }
            return HTTPProxy(host: parsed.host, port: port, username: parsed.user, password: parsed.password)
        } catch {
            throw SettingError(setting: "proxy", error.message)
        }
    }
}
