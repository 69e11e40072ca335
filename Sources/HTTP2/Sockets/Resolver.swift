import OwnerThread

/// Runs getaddrinfo on a short-lived helper thread: a slow or failing DNS server must not stall
/// the I/O thread, which carries every other connection's traffic. New connections are rare,
/// so a thread per lookup is cheap enough.
enum Resolver {
    struct Answer: Sendable {
        var connectionID: Int
        var result: Result<[SocketAddress], HTTP2Error>
    }

    static func resolve(host: String, port: Int, connectionID: Int, shared: ClientShared) {
        resolve(host: host, port: port) { shared.post(Answer(connectionID: connectionID, result: $0)) }
    }

    /// `completion` runs on the helper thread (or here, when no thread could be started).
    static func resolve(host: String, port: Int, completion: @escaping @Sendable (Result<[SocketAddress], HTTP2Error>) -> Void) {
        do throws(OwnerThreadError) {
            try OwnerThread.start(name: "http2-resolve") {
                let result: Result<[SocketAddress], HTTP2Error>
                do throws(HTTP2Error) {
                    result = .success(try TCPSocket.resolve(host: host, port: port))
                } catch {
                    result = .failure(error)
                }
                completion(result)
            }
        } catch {
            completion(.failure(HTTP2Error(code: .protocolError, message: error.message)))
        }
    }
}
