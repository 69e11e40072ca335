#!/usr/bin/python3
"""Minimal HTTP CONNECT proxy for tests. Prints "PORT <n>" once listening, then one
"SAW <request line>" and "AUTH <Proxy-Authorization value>" line per tunnel it opens."""
import socket
import sys
import threading


def pipe(source, target):
    try:
        while True:
            data = source.recv(65536)
            if not data:
                break
            target.sendall(data)
    except OSError:
        pass
    finally:
        for s in (source, target):
            try:
                s.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass


def handle(client):
    header = b""
    while b"\r\n\r\n" not in header:
        chunk = client.recv(4096)
        if not chunk:
            client.close()
            return
        header += chunk
    lines = header.split(b"\r\n\r\n", 1)[0].decode().split("\r\n")
    request_line = lines[0]
    auth = next((line.split(":", 1)[1].strip() for line in lines[1:]
                 if line.lower().startswith("proxy-authorization:")), "none")
    print(f"SAW {request_line}", flush=True)
    print(f"AUTH {auth}", flush=True)
    method, target, _ = request_line.split(" ", 2)
    if method != "CONNECT":
        client.sendall(b"HTTP/1.1 405 Method Not Allowed\r\n\r\n")
        client.close()
        return
    host, port = target.rsplit(":", 1)
    try:
        upstream = socket.create_connection((host.strip("[]"), int(port)))
    except OSError:
        client.sendall(b"HTTP/1.1 502 Bad Gateway\r\n\r\n")
        client.close()
        return
    client.sendall(b"HTTP/1.1 200 Connection established\r\n\r\n")
    threading.Thread(target=pipe, args=(client, upstream), daemon=True).start()
    pipe(upstream, client)


def main():
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    listener.bind(("127.0.0.1", 0))
    listener.listen(64)
    print(f"PORT {listener.getsockname()[1]}", flush=True)
    while True:
        client, _ = listener.accept()
        threading.Thread(target=handle, args=(client,), daemon=True).start()


if __name__ == "__main__":
    main()
