"""The release binary under the systemd unit's seccomp sandbox, for real: one notification end to end.

    python3 -m deploy_check.runtime --binary PATH --unit ops/deploy/pushworker.service \
        --dockerfile ops/deploy/Dockerfile

`pushworker sandbox` (the APNs simulator) and `pushworker run` both run through unit_sandbox with
--strict (a system call outside the unit's SystemCallFilter kills the process instead of answering
EPERM, so nothing the unit refuses goes unnoticed), MemoryDenyWriteExecute and
RestrictAddressFamilies as the unit sets them, as an unprivileged user (uid 61234, no
capabilities), on the RabbitMQ and Redis at AMQP_URL / REDIS_URL (default 127.0.0.1:5672 and
:6379), with a job queue of its own. Then:
  - the worker answers its status endpoint (/readyz, or /healthz where the binary has no /readyz);
  - the Dockerfile's HEALTHCHECK command, run as written, succeeds against that worker;
  - `pushworker send --wait` publishes one job: job.completed with sent = 1, and the simulator
    recorded the token with status 200;
  - SIGTERM: the worker exits 0 within the unit's TimeoutStopSec, and neither process died of a
    signal (SIGSYS would be a refused system call).
Everything it started is stopped by pid; its queues are deleted.
"""
import argparse
import json
import os
import random
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

import pika

ROOT = Path(__file__).resolve().parents[3]
sys.path.insert(0, str(ROOT / "ops" / "lib"))
from pushworker_ops.errors import OpsError  # noqa: E402
from pushworker_ops.processes import clean_env, spawn, stop, stop_all  # noqa: E402
from pushworker_ops.sandbox import Sandbox  # noqa: E402

from .unit_sandbox import unit_settings  # noqa: E402

AMQP_URL = os.environ.get("AMQP_URL", "amqp://guest:guest@127.0.0.1:5672/")
REDIS_URL = os.environ.get("REDIS_URL", "redis://127.0.0.1:6379/0")
UID = 61234
RETRY_DELAYS = ["1s"]


def say(message):
    print(f"  runtime: {message}", flush=True)


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def seconds(value):
    match = re.fullmatch(r"(\d+)\s*(s|sec|min|m)?", value.strip())
    if not match:
        raise OpsError(f"cannot read the duration {value!r}")
    return int(match.group(1)) * (60 if match.group(2) in ("min", "m") else 1)


def wrapper(path, unit, binary, uid=None):
    """A script that runs the binary under the unit's seccomp sandbox: usable wherever a binary is."""
    as_user = f" --uid {uid}" if uid is not None else ""
    path.write_text("#!/bin/sh\n"
                    f"PYTHONPATH={ROOT / 'ops' / 'lib'} exec /usr/bin/python3 -m deploy_check.unit_sandbox "
                    f"{unit} --strict{as_user} -- {binary} \"$@\"\n")
    path.chmod(0o755)
    return str(path)


def get(url, timeout=2):
    try:
        with urllib.request.urlopen(url, timeout=timeout) as answer:
            return answer.status, answer.read().decode(errors="replace")
    except urllib.error.HTTPError as error:
        return error.code, error.read().decode(errors="replace")
    except OSError:
        return None, ""


def healthcheck_command(dockerfile):
    """The exec-form command of the Dockerfile's HEALTHCHECK."""
    text = Path(dockerfile).read_text().replace("\\\n", " ")
    match = re.search(r"^HEALTHCHECK\b.*?\bCMD\s+(\[.*\])\s*$", text, re.M)
    if not match:
        raise OpsError(f"{dockerfile}: no HEALTHCHECK … CMD [exec form]")
    return json.loads(match.group(1))


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--binary", required=True)
    parser.add_argument("--unit", required=True)
    parser.add_argument("--dockerfile", required=True)
    args = parser.parse_args()
    unit = str(Path(args.unit).resolve())
    stop_timeout = seconds(unit_settings(unit)["TimeoutStopSec"][-1])

    help_text = subprocess.run([args.binary, "run", "--help"], capture_output=True, text=True).stdout
    has_probes = "/readyz" in help_text or "/livez" in help_text

    work = Path(tempfile.mkdtemp(prefix="pushworker-deploy-check-"))
    work.chmod(0o755)
    (work / "sandbox").mkdir()
    sandboxed = wrapper(work / "pushworker-sandboxed", unit, args.binary, UID)
    # The simulator runs as root: as any other user it closes every connection it accepts (it sets
    # its accepted sockets' TCP_NODELAY at the SOL_SOCKET level, which is SO_DEBUG, refused
    # without CAP_NET_ADMIN). It is the test's peer, not what is tested here.
    simulator = wrapper(work / "pushworker-simulator", unit, args.binary)
    nonce = random.getrandbits(32)
    queue = f"deploycheck.jobs.{nonce:08x}"
    queues = [queue, f"{queue}.bulk", f"{queue}.dead", f"{queue}.delay"] + \
        [f"{queue}{lane}.retry.{d}" for lane in ("", ".bulk") for d in RETRY_DELAYS]
    token = f"de910e{nonce:08x}".ljust(64, "0")
    env = clean_env()
    sandbox = Sandbox(simulator, work / "sandbox", work / "sandbox.log", env=env, new_session=False)
    worker = None
    failures = []
    try:
        sandbox.start(timeout=60)
        say(f"APNs simulator under the unit's filter (as root): {sandbox.url}")
        for name in ("ca.pem", "token-key.p8"):     # the worker's user reads them
            (work / "sandbox" / name).chmod(0o644)
        status_port = free_port()
        config = work / "pushworker.yaml"
        config.write_text(f"""amqp:
  url: {AMQP_URL}
redis:
  url: {REDIS_URL}
worker:
  job_queue: {queue}
  retry_delays: [{", ".join(RETRY_DELAYS)}]
  prefetch: 10
  status_port: {status_port}
  status_host: 127.0.0.1
  shutdown_timeout: 30s
apps:
  - name: default
    platform: apns
    url: {sandbox.url}
    ca_file: {sandbox.ca}
    topic: com.example.app
    token:
      key_file: {sandbox.key}
      key_id: SANDBOXKEY
      team_id: SANDBOXTM1
""")
        config.chmod(0o644)
        worker = spawn("worker", [sandboxed, "run", "--config", str(config)], work / "worker.log", env=env,
                       new_session=False)
        path = "/readyz" if has_probes else "/healthz"
        deadline = time.monotonic() + 30
        while get(f"http://127.0.0.1:{status_port}{path}")[0] != 200:
            if worker.poll() is not None or time.monotonic() > deadline:
                raise OpsError(f"the worker never answered 200 on {path}; see {work / 'worker.log'}:\n"
                               + (work / "worker.log").read_text()[-2000:])
            time.sleep(0.2)
        say(f"worker under the unit's filter, uid {UID}: {path} 200 on port {status_port}")

        command = healthcheck_command(args.dockerfile)
        probe_env = {**env, "PUSHWORKER_STATUS_PORT": str(status_port)}
        if not has_probes:
            # The binary predates /livez: run the same command for /healthz, and say so.
            command = [part.replace("/livez", "/healthz") for part in command]
        done = subprocess.run(command, env=probe_env, capture_output=True, text=True, timeout=10)
        if done.returncode != 0:
            failures.append(f"the Dockerfile's HEALTHCHECK command exited {done.returncode}: {done.stderr.strip()}")
        else:
            say("the Dockerfile's HEALTHCHECK command: exit 0"
                + ("" if has_probes else " (with /healthz: this binary has no /livez yet)"))

        sent = subprocess.run([args.binary, "send", "--amqp-url", AMQP_URL, "--job-queue", queue, "--token", token,
                               "--alert", "deploy-check", "--wait", "--wait-seconds", "20"],
                              env=env, capture_output=True, text=True, timeout=40)
        completed = [json.loads(line[line.index("{"):]) for line in sent.stdout.splitlines()
                     if "{" in line and '"job.completed"' in line]
        if sent.returncode != 0 or not completed:
            failures.append(f"pushworker send --wait exited {sent.returncode} without job.completed: "
                            f"{(sent.stdout + sent.stderr).strip()[-600:]}")
        else:
            event = completed[0]
            say("job.completed: " + ", ".join(f"{k} {event.get(k)}" for k in ("devices", "sent", "failed", "invalid")))
            if event.get("sent") != 1:
                failures.append(f"job.completed does not say sent = 1: {event}")
        received = [item for item in sandbox.received() if item.get("token") == token]
        if [item.get("status") for item in received] != [200]:
            failures.append(f"the simulator recorded {received} for the token, expected one 200")
        else:
            say("the simulator recorded the notification: 200")

        started = time.monotonic()
        ended = stop(worker, "worker", timeout=stop_timeout)
        took = time.monotonic() - started
        worker = None
        if ended.code != 0 or ended.killed:
            failures.append(f"after SIGTERM the worker ended with {ended.code} (killed: {ended.killed}); "
                            f"see {work / 'worker.log'}")
        else:
            say(f"SIGTERM: worker exit 0 in {took:.1f} s (TimeoutStopSec {stop_timeout} s)")
        down = subprocess.run(command, env=probe_env, capture_output=True, text=True, timeout=10)
        if down.returncode == 0:
            failures.append("the HEALTHCHECK command still succeeds with the worker stopped")
        else:
            say(f"the HEALTHCHECK command with the worker stopped: exit {down.returncode}")
        sandbox_alive = sandbox.alive()
        sandbox.stop()
        if not sandbox_alive or sandbox.process.returncode not in (0, -signal.SIGTERM):
            failures.append(f"the simulator ended with {sandbox.process.returncode}; see {work / 'sandbox.log'}")
        for name in ("worker.log", "sandbox.log"):
            text = (work / name).read_text(errors="replace")
            if "Bad system call" in text or "SIGSYS" in text:
                failures.append(f"{name} mentions a refused system call")
    finally:
        if worker is not None:
            stop(worker, "worker", timeout=stop_timeout)
        sandbox.stop()
        stop_all()
        try:
            connection = pika.BlockingConnection(pika.URLParameters(AMQP_URL))
            channel = connection.channel()
            for name in queues:
                channel.queue_delete(name)
            connection.close()
        except Exception as error:  # noqa: BLE001: cleanup must not hide the verdict
            say(f"could not delete {queue}*: {error}")
    if failures:
        for failure in failures:
            print(f"  runtime: FAIL {failure}", flush=True)
        print(f"  runtime: logs kept in {work}", flush=True)
        return 1
    shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except OpsError as error:
        print(f"  runtime: FAIL {error}", flush=True)
        sys.exit(1)
