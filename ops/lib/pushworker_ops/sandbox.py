"""The APNs sandbox (`pushworker sandbox`) as a child process, steered over /_sandbox/."""
import json
import re
import subprocess
import time
from pathlib import Path

from .errors import OpsError
from .processes import log_tail, spawn, stop

LISTENING = re.compile(rb"APNs sandbox listening on https://\S+:(\d+)")
WEBPUSH_LISTENING = re.compile(rb"Web Push sandbox listening on https://\S+:(\d+)")
FCM_LISTENING = re.compile(rb"FCM sandbox listening on https://\S+:(\d+)")
MANAGEMENT_LISTENING = re.compile(rb"APNs channel management listening on https://\S+:(\d+)")


class Sandbox:
    def __init__(self, binary, state, log_path, env=None, new_session=True, latency_ms=None, name="sandbox"):
        """state: the folder of its CA and keys, kept across restarts. env: its environment (None:
        ours). latency_ms: --latency-ms, else its default."""
        self.binary, self.state, self.log_path = binary, Path(state), Path(log_path)
        self.env, self.new_session, self.latency_ms, self.name = env, new_session, latency_ms, name
        self.process = None
        self.port = None
        self.webpush_port = None
        self.fcm_port = None
        self.management_port = None

    def start(self, same_port=False, timeout=120, rules=(), go_away_every=None):
        """Starts it on a free port, or with same_port on the one it had (a restart: the workers
        keep their --apns-url); waits until it says where it listens. rules and go_away_every are
        given on its command line, so they hold from its first request: a worker that reconnects
        the moment the port opens must not meet a sandbox that accepts every token."""
        port = self.port if same_port and self.port else 0
        webpush_port = self.webpush_port if same_port and self.webpush_port else 0
        fcm_port = self.fcm_port if same_port and self.fcm_port else 0
        management_port = self.management_port if same_port and self.management_port else 0
        self.port = None
        logged_before = self.log_path.stat().st_size if self.log_path.exists() else 0
        options = ["--latency-ms", str(self.latency_ms)] if self.latency_ms is not None else []
        for rule in rules:
            options += ["--rule", json.dumps(rule)]
        if go_away_every is not None:
            options += ["--go-away-every", str(go_away_every)]
        # Its Web Push and FCM services too, each on a port of its own (ops/faults' webpush-429, fcm-goaway).
        options += ["--webpush-port", str(webpush_port), "--fcm-port", str(fcm_port)]
        # Its Live Activity channel-management API (ops/gateway-check's http-channels).
        options += ["--broadcast-management-port", str(management_port)]
        self.process = spawn(self.name, [self.binary, "sandbox", "--port", str(port), "--state-directory", str(self.state),
                                         *options, "--log-level", "warning"],
                             self.log_path, env=self.env, new_session=self.new_session)
        deadline = time.monotonic() + timeout
        while True:
            with open(self.log_path, "rb") as log:
                log.seek(logged_before)
                text = log.read()
            match, webpush, fcm = LISTENING.search(text), WEBPUSH_LISTENING.search(text), FCM_LISTENING.search(text)
            management = MANAGEMENT_LISTENING.search(text)
            if match and webpush and fcm and management:
                self.port = int(match.group(1))
                self.management_port = int(management.group(1))
                self.webpush_port = int(webpush.group(1))
                self.fcm_port = int(fcm.group(1))
                break
            if self.process.poll() is not None or time.monotonic() > deadline:
                if port:
                    self.port = port          # kept for the next attempt
                ended = f"exited ({self.process.returncode})" if self.process.returncode is not None else \
                    f"printed no port within {timeout}s"
                raise OpsError(f"the sandbox {ended}; see {self.log_path}:\n{log_tail(self.log_path)}")
            time.sleep(0.1)
        self.url = f"https://127.0.0.1:{self.port}"
        self.webpush_url = f"https://127.0.0.1:{self.webpush_port}"
        self.fcm_url = f"https://127.0.0.1:{self.fcm_port}"
        self.management_url = f"https://127.0.0.1:{self.management_port}"
        self.fcm_service_account = str(self.state / "fcm-service-account.json")
        self.ca = str(self.state / "ca.pem")
        self.key = str(self.state / "token-key.p8")

    def alive(self):
        return self.process is not None and self.process.poll() is None

    def stop(self):
        if self.alive():
            stop(self.process, self.name, timeout=15)

    def control(self, method, path, body=None):
        """A request to /_sandbox/<path>, tried up to 5 times (it may be restarting); the answer's text."""
        for _ in range(5):
            out = subprocess.run(
                ["curl", "-sS", "--http2", "--max-time", "30", "--cacert", self.ca, "-X", method,
                 f"{self.url}/_sandbox/{path}"] + (["--data-binary", "@-"] if body is not None else []),
                input=(json.dumps(body).encode() if body is not None else None), capture_output=True)
            if out.returncode == 0:
                return out.stdout.decode()
            time.sleep(0.3)
        raise OpsError(f"sandbox control {method} {path} failed: {out.stderr.decode().strip()}")

    def webpush_control(self, method, path, body=None):
        """A request to the Web Push service's /_sandbox/webpush/<path>; the answer's text."""
        out = subprocess.run(
            ["curl", "-sS", "--max-time", "30", "--cacert", self.ca, "-X", method, f"{self.webpush_url}/_sandbox/webpush/{path}"]
            + (["--data-binary", "@-"] if body is not None else []),
            input=(json.dumps(body).encode() if body is not None else None), capture_output=True)
        if out.returncode != 0:
            raise OpsError(f"web push sandbox control {method} {path} failed: {out.stderr.decode().strip()}")
        return out.stdout.decode()

    def fcm_control(self, method, path, body=None):
        """A request to the FCM service's /_sandbox/<path>; the answer's text."""
        out = subprocess.run(
            ["curl", "-sS", "--http2", "--max-time", "30", "--cacert", self.ca, "-X", method, f"{self.fcm_url}/_sandbox/{path}"]
            + (["--data-binary", "@-"] if body is not None else []),
            input=(json.dumps(body).encode() if body is not None else None), capture_output=True)
        if out.returncode != 0:
            raise OpsError(f"FCM sandbox control {method} {path} failed: {out.stderr.decode().strip()}")
        return out.stdout.decode()

    def webpush_stats(self):
        return json.loads(self.webpush_control("GET", "stats"))

    def webpush_received(self):
        return [json.loads(line) for line in self.webpush_control("GET", "received").splitlines() if line.strip()]

    def stats(self):
        return json.loads(self.control("GET", "stats"))

    def received(self):
        """Its record of requests, one JSON object each."""
        return [json.loads(line) for line in self.control("GET", "received").splitlines() if line.strip()]

    def reset(self, rules=None, faults=None):
        """Empties its record and counters; rules and faults, when given, replace its own."""
        if faults is not None:
            self.control("PUT", "faults", faults)
        if rules is not None:
            self.control("PUT", "rules", list(rules))
        self.control("POST", "reset")
