#!/usr/bin/python3
"""HTTP/2 test peer for the HTTP2 module's tests (python3-h2, stdlib only otherwise).

Listens on 127.0.0.1 on an ephemeral port and prints "PORT <n>" once ready. Modes:
  echo        answer every request with 200 and the request body (default)
  stall       complete the handshake, never answer
  reset       reset the TCP connection (RST) as soon as a request arrives
  goaway      after --goaway-after answered requests on a connection, send GOAWAY whose
              last_stream_id covers only the answered ones, then close that connection
  freeze      answer the first request, then stop reading the socket (PINGs go unanswered)
  refuse      reset every request except GET /stats with RST_STREAM(REFUSED_STREAM)
Whatever the mode, any request to /flood… answers 200 and then streams a body that never ends (as
fast as flow control lets it, 256 MiB at most) until the client resets the stream; any request to
/forbidden… answers 403 {"reason":"BadJwtToken"} (a push service refusing every VAPID token);
GET /many-headers answers with 100 headers; GET /long-header with one header value of 64 KiB.
/stats counts the resets ("resets"), the body bytes /flood sent before each ("flood_bytes") and
the 403s ("forbidden").
Options: --max-streams N advertises SETTINGS_MAX_CONCURRENT_STREAMS, --raise-streams-to M sends a
second SETTINGS with M after the first answer (as APNs does); --client-ca FILE requires
a client certificate. GET /stats returns JSON counters; the body of every answer also carries
the client certificate subject in the x-client-subject header.
"""
import argparse
import json
import socket
import ssl
import struct
import sys
import threading
import time

import h2.config
import h2.connection
import h2.events
import h2.exceptions
import h2.settings
from h2.errors import ErrorCodes
from h2.settings import SettingCodes

lock = threading.Lock()
stats = {"connections": 0, "requests": 0, "max_concurrent": 0, "goaways": 0, "client_subjects": [], "resets": 0,
         "flood_bytes": [], "forbidden": 0}
FLOOD_LIMIT = 256 << 20


def flood(tls_socket, conn, stream_id):
    """Streams body bytes on `stream_id` until the client resets it (or FLOOD_LIMIT): returns the
    bytes sent. Other streams' events meanwhile are only acknowledged."""
    conn.send_headers(stream_id, [(":status", "201"), ("location", "https://push.example/m/1")])
    tls_socket.sendall(conn.data_to_send())
    chunk = b"x" * 16384
    sent = 0
    while sent < FLOOD_LIMIT:
        window = min(conn.local_flow_control_window(stream_id), conn.max_outbound_frame_size)
        if window > 0:
            conn.send_data(stream_id, chunk[:window])
            sent += window
            tls_socket.sendall(conn.data_to_send())
            continue
        data = tls_socket.recv(65536)
        if not data:
            return sent
        for event in conn.receive_data(data):
            if isinstance(event, h2.events.StreamReset) and event.stream_id == stream_id:
                tls_socket.sendall(conn.data_to_send())
                return sent
        tls_socket.sendall(conn.data_to_send())
    return sent


def subject_of(tls_socket):
    cert = tls_socket.getpeercert()
    if not cert:
        return ""
    parts = []
    for rdn in cert.get("subject", ()):
        for key, value in rdn:
            parts.append(f"{key}={value}")
    return ",".join(parts)


def serve(tls_socket, args):
    subject = subject_of(tls_socket)
    with lock:
        stats["connections"] += 1
        if subject:
            stats["client_subjects"].append(subject)
    config = h2.config.H2Configuration(client_side=False, header_encoding="utf-8")
    conn = h2.connection.H2Connection(config=config)
    initial = {SettingCodes.MAX_HEADER_LIST_SIZE: 65536}
    if args.max_streams is not None:
        initial[SettingCodes.MAX_CONCURRENT_STREAMS] = args.max_streams
    conn.local_settings = h2.settings.Settings(client=False, initial_values=initial)
    conn.initiate_connection()
    tls_socket.sendall(conn.data_to_send())
    open_streams = {}
    answered = 0
    highest_answered = 0
    try:
        while True:
            data = tls_socket.recv(65536)
            if not data:
                return
            events = conn.receive_data(data)
            finished = []
            for event in events:
                if isinstance(event, h2.events.RequestReceived):
                    open_streams[event.stream_id] = {"headers": dict(event.headers), "body": b""}
                    with lock:
                        stats["requests"] += 1
                        stats["max_concurrent"] = max(stats["max_concurrent"], len(open_streams))
                    if args.mode == "refuse" and dict(event.headers).get(":path") != "/stats":
                        open_streams.pop(event.stream_id, None)
                        conn.reset_stream(event.stream_id, error_code=ErrorCodes.REFUSED_STREAM)
                        continue
                    if args.mode == "reset":
                        tls_socket.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
                        tls_socket.close()
                        return
                elif isinstance(event, h2.events.DataReceived):
                    if event.stream_id in open_streams:
                        open_streams[event.stream_id]["body"] += event.data
                    conn.acknowledge_received_data(event.flow_controlled_length, event.stream_id)
                elif isinstance(event, h2.events.StreamEnded):
                    finished.append(event.stream_id)
                elif isinstance(event, h2.events.StreamReset):
                    open_streams.pop(event.stream_id, None)
                    with lock:
                        stats["resets"] += 1
            tls_socket.sendall(conn.data_to_send())
            if args.mode == "stall":
                continue
            if finished and args.delay > 0:
                time.sleep(args.delay)
            for stream_id in finished:
                request = open_streams.pop(stream_id, None)
                if request is None:
                    continue
                path = request["headers"].get(":path", "")
                if path.startswith("/flood"):
                    sent = flood(tls_socket, conn, stream_id)
                    with lock:
                        stats["resets"] += 1
                        stats["flood_bytes"].append(sent)
                    continue
                if path.startswith("/forbidden"):
                    # A push service that refuses every VAPID token, as Apple words it.
                    body = b'{"reason":"BadJwtToken"}'
                    conn.send_headers(stream_id, [(":status", "403"), ("content-length", str(len(body)))])
                    conn.send_data(stream_id, body, end_stream=True)
                    with lock:
                        stats["forbidden"] += 1
                    continue
                if path in ("/many-headers", "/long-header"):
                    extra = [(f"x-h{i}", "v") for i in range(100)] if path == "/many-headers" else [("x-long", "v" * 65536)]
                    conn.send_headers(stream_id, [(":status", "200")] + extra, end_stream=True)
                    continue
                if path == "/stats":
                    with lock:
                        body = json.dumps(stats).encode()
                else:
                    body = request["body"] or f"hello {path}".encode()
                headers = [(":status", "200"), ("content-length", str(len(body))),
                           ("x-client-subject", subject or "none"),
                           ("x-authority", request["headers"].get(":authority", "")),
                           ("x-method", request["headers"].get(":method", ""))]
                conn.send_headers(stream_id, headers)
                conn.send_data(stream_id, body, end_stream=True)
                answered += 1
                highest_answered = max(highest_answered, stream_id)
                if answered == 1 and args.raise_streams_to is not None:
                    conn.update_settings({SettingCodes.MAX_CONCURRENT_STREAMS: args.raise_streams_to})
                if args.mode == "goaway" and answered >= args.goaway_after:
                    break
            tls_socket.sendall(conn.data_to_send())
            if args.mode == "goaway" and answered >= args.goaway_after:
                conn.close_connection(error_code=0, last_stream_id=highest_answered,
                                      additional_data=b'{"reason":"Testing"}')
                tls_socket.sendall(conn.data_to_send())
                with lock:
                    stats["goaways"] += 1
                time.sleep(0.2)
                return
            if args.mode == "freeze" and answered >= 1:
                while True:
                    time.sleep(3600)
    except (OSError, ssl.SSLError, h2.exceptions.ProtocolError):
        return
    finally:
        try:
            tls_socket.close()
        except OSError:
            pass


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--cert", required=True)
    parser.add_argument("--key", required=True)
    parser.add_argument("--mode", default="echo", choices=["echo", "stall", "reset", "goaway", "freeze", "refuse"])
    parser.add_argument("--max-streams", type=int)
    parser.add_argument("--raise-streams-to", type=int)
    parser.add_argument("--goaway-after", type=int, default=5)
    parser.add_argument("--delay", type=float, default=0.0)
    parser.add_argument("--client-ca")
    args = parser.parse_args()

    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(args.cert, args.key)
    context.set_alpn_protocols(["h2"])
    if args.client_ca:
        context.verify_mode = ssl.CERT_REQUIRED
        context.load_verify_locations(args.client_ca)

    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    listener.bind(("127.0.0.1", 0))
    listener.listen(128)
    print(f"PORT {listener.getsockname()[1]}", flush=True)
    while True:
        raw, _ = listener.accept()
        raw.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

        def handshake_and_serve(raw=raw):
            try:
                tls_socket = context.wrap_socket(raw, server_side=True)
            except (OSError, ssl.SSLError) as error:
                print(f"HANDSHAKE-FAILED {error}", flush=True)
                raw.close()
                return
            serve(tls_socket, args)

        threading.Thread(target=handshake_and_serve, daemon=True).start()


if __name__ == "__main__":
    main()
