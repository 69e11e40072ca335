"""The release binary under the systemd unit's seccomp sandbox, for real: one notification end to end,
with compose.yaml's sandbox service and the workers' configuration file.

    python3 -m deploy_check.runtime --binary PATH --unit ops/deploy/pushworker.service \
        --dockerfile ops/deploy/Dockerfile --compose ops/deploy/compose.yaml

No Docker engine runs here, so the compose services run as processes, their commands and files
taken from compose.yaml with these substitutions only: /sandbox -> a temporary folder, the host
name `sandbox` -> localhost, ports 2197 and 8081 -> free ones, status_host 0.0.0.0 -> 127.0.0.1,
and a job queue of its own (deploycheck.jobs.<random>) on the RabbitMQ and Redis at AMQP_URL /
REDIS_URL (default 127.0.0.1:5672 and :6379), given as PUSHWORKER_AMQP_URL / PUSHWORKER_REDIS_URL
as compose.yaml gives them.

  - the sandbox service's script (openssl: a certificate for DNS:sandbox, a token key; then
    `pushworker sandbox --certificate-file … --token-key …`), its healthcheck command until it passes;
  - `pushworker run` with the workers' configuration file, through unit_sandbox with --strict (a
    system call outside the unit's SystemCallFilter kills the process instead of answering EPERM,
    so nothing the unit refuses goes unnoticed), MemoryDenyWriteExecute and
    RestrictAddressFamilies as the unit sets them, as an unprivileged user (uid 61234, no
    capabilities); its status endpoint answers (/readyz, or /healthz where the binary has none);
  - the Dockerfile's HEALTHCHECK command, run as written, succeeds against that worker (with
    /healthz for /livez where the binary has no /livez), and fails once the worker is stopped;
  - `pushworker send --wait` publishes one job of three devices, the sandbox told (over its
    control API) to answer one 410 and another 503 once: job.completed says sent 1, invalid 1,
    retried 1, and the sandbox records 200, 410, then 503 and 200 (the retry, through the delay queue);
  - where the binary serves /metrics: every metric the dashboard uses is there with its type and
    labels (a labelled one may have no series yet, and is named);
  - SIGTERM: the worker exits 0 within the unit's TimeoutStopSec.
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
import yaml

ROOT = Path(__file__).resolve().parents[3]
sys.path.insert(0, str(ROOT / "ops" / "lib"))
from pushworker_ops.errors import OpsError  # noqa: E402
from pushworker_ops.processes import clean_env, spawn, stop, stop_all  # noqa: E402

from .metrics import WORKER  # noqa: E402
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


def control(root, port, method, path, body=None):
    """A request to the sandbox's /_sandbox/ API; the answer's text."""
    done = subprocess.run(["curl", "-sS", "--fail", "--http2", "--max-time", "10", "--cacert", str(root / "shared" / "server.pem"),
                           "-X", method, f"https://localhost:{port}/_sandbox/{path}"]
                          + (["--data-binary", "@-"] if body is not None else []),
                          input=json.dumps(body) if body is not None else None, capture_output=True, text=True)
    if done.returncode != 0:
        raise OpsError(f"sandbox {method} /_sandbox/{path}: {done.stderr.strip()}")
    return done.stdout


def metrics_problems(text):
    """The exposition against metrics.WORKER: (problems, labelled metrics without a series yet)."""
    types = dict(re.findall(r"^# TYPE (\S+) (\S+)", text, re.M))
    labels = {}
    for name, body in re.findall(r"^([a-zA-Z_:][\w:]*)(?:\{([^}]*)\})?\s", text, re.M):
        base = re.sub(r"_(bucket|sum|count)$", "", name) if re.sub(r"_(bucket|sum|count)$", "", name) in types and \
            types.get(re.sub(r"_(bucket|sum|count)$", "", name)) == "histogram" else name
        keys = set(re.findall(r"(\w+)=\"", body or "")) - {"le"}
        labels.setdefault(base, set()).update(keys)
    problems, absent = [], []
    for name, (kind, expected) in WORKER.items():
        if name not in types and name not in labels:
            if expected:
                absent.append(name)
            else:
                problems.append(f"{name} absent")
            continue
        if types.get(name) != kind:
            problems.append(f"{name} is a {types.get(name)}, expected a {kind}")
        if name in labels and labels[name] and labels[name] != expected:
            problems.append(f"{name} has labels {sorted(labels[name])}, expected {sorted(expected)}")
    return problems, absent


def healthcheck_command(dockerfile):
    """The exec-form command of the Dockerfile's HEALTHCHECK."""
    text = Path(dockerfile).read_text().replace("\\\n", " ")
    match = re.search(r"^HEALTHCHECK\b.*?\bCMD\s+(\[.*\])\s*$", text, re.M)
    if not match:
        raise OpsError(f"{dockerfile}: no HEALTHCHECK … CMD [exec form]")
    return json.loads(match.group(1))


def compose_parts(compose):
    """The sandbox service's script and healthcheck, and the workers' configuration file, from compose.yaml."""
    services = yaml.safe_load(Path(compose).read_text())["services"]
    sandbox = services["sandbox"]
    if sandbox.get("entrypoint") != ["sh", "-c"] or len(sandbox.get("command", [])) != 1:
        raise OpsError("compose.yaml: the sandbox service is expected to be `entrypoint: [sh, -c]` with one script")
    test = sandbox["healthcheck"]["test"]
    if test[0] != "CMD":
        raise OpsError("compose.yaml: the sandbox's healthcheck is expected in the CMD form")
    worker = services["worker"]
    config = next(c for c in worker["configs"] if c["target"] == "/etc/pushworker/pushworker.yaml")
    config_file = Path(compose).parent / yaml.safe_load(Path(compose).read_text())["configs"][config["source"]]["file"]
    return sandbox["command"][0], test[1:], config_file


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--binary", required=True)
    parser.add_argument("--unit", required=True)
    parser.add_argument("--dockerfile", required=True)
    parser.add_argument("--compose", required=True)
    args = parser.parse_args()
    unit = str(Path(args.unit).resolve())
    stop_timeout = seconds(unit_settings(unit)["TimeoutStopSec"][-1])
    script, sandbox_health, config_file = compose_parts(args.compose)

    help_text = subprocess.run([args.binary, "run", "--help"], capture_output=True, text=True).stdout
    has_probes = "/readyz" in help_text or "/livez" in help_text
    has_metrics = "/metrics" in help_text

    work = Path(tempfile.mkdtemp(prefix="pushworker-deploy-check-"))
    work.chmod(0o755)
    (work / "bin").mkdir()
    root = work / "sandbox"
    worker_binary = wrapper(work / "pushworker-worker", unit, args.binary, UID)
    # The sandbox runs as root, as compose.yaml runs it: as any other user it closes every
    # connection it accepts (it sets its accepted sockets' TCP_NODELAY at the SOL_SOCKET level,
    # which is SO_DEBUG, refused without CAP_NET_ADMIN). It is the test's peer, not what is tested.
    wrapper(work / "bin" / "pushworker", unit, args.binary)
    sandbox_port, status_port = free_port(), free_port()
    nonce = random.getrandbits(32)
    queue = f"deploycheck.jobs.{nonce:08x}"
    queues = [queue, f"{queue}.bulk", f"{queue}.dead", f"{queue}.delay"] + \
        [f"{queue}{lane}.retry.{d}" for lane in ("", ".bulk") for d in RETRY_DELAYS]

    def local(text):
        return text.replace("https://sandbox:2197", f"https://localhost:{sandbox_port}").replace("/sandbox", str(root)) \
            .replace("--port 2197", f"--port {sandbox_port}").replace("/127.0.0.1/2197", f"/127.0.0.1/{sandbox_port}")

    env = {**clean_env(), "PATH": f"{work / 'bin'}:{os.environ['PATH']}"}
    worker_env = {**clean_env(), "PUSHWORKER_AMQP_URL": AMQP_URL, "PUSHWORKER_REDIS_URL": REDIS_URL}
    sandbox = worker = None
    failures = []
    try:
        sandbox = spawn("sandbox", ["sh", "-c", local(script)], work / "sandbox.log", env=env, new_session=False)
        health = [local(part) for part in sandbox_health]
        deadline = time.monotonic() + 30
        while subprocess.run(health, env=env, capture_output=True).returncode != 0:
            if sandbox.poll() is not None or time.monotonic() > deadline:
                raise OpsError("compose.yaml's sandbox never passed its healthcheck; see "
                               f"{work / 'sandbox.log'}:\n" + (work / "sandbox.log").read_text()[-2000:])
            time.sleep(0.2)
        say(f"compose.yaml's sandbox script: certificate for DNS:sandbox, token key; healthy on port {sandbox_port}")

        config = work / "pushworker.yaml"
        text = local(config_file.read_text()).replace("status_port: 8081", f"status_port: {status_port}") \
            .replace("status_host: 0.0.0.0", "status_host: 127.0.0.1")
        text = text.replace("worker:\n", f"worker:\n  job_queue: {queue}\n  retry_delays: [{', '.join(RETRY_DELAYS)}]\n", 1)
        config.write_text(text)
        config.chmod(0o644)
        worker = spawn("worker", [worker_binary, "run", "--config", str(config)], work / "worker.log", env=worker_env,
                       new_session=False)
        path = "/readyz" if has_probes else "/healthz"
        deadline = time.monotonic() + 30
        while get(f"http://127.0.0.1:{status_port}{path}")[0] != 200:
            if worker.poll() is not None or time.monotonic() > deadline:
                raise OpsError(f"the worker never answered 200 on {path}; see {work / 'worker.log'}:\n"
                               + (work / "worker.log").read_text()[-2000:])
            time.sleep(0.2)
        say(f"worker (compose's configuration file) under the unit's filter, uid {UID}: {path} 200")

        command = healthcheck_command(args.dockerfile)
        probe_env = {**clean_env(), "PUSHWORKER_STATUS_PORT": str(status_port)}
        if not has_probes:
            # The binary predates /livez: run the same command for /healthz, and say so.
            command = [part.replace("/livez", "/healthz") for part in command]
        done = subprocess.run(command, env=probe_env, capture_output=True, text=True, timeout=10)
        if done.returncode != 0:
            failures.append(f"the Dockerfile's HEALTHCHECK command exited {done.returncode}: {done.stderr.strip()}")
        else:
            say("the Dockerfile's HEALTHCHECK command: exit 0"
                + ("" if has_probes else " (with /healthz: this binary has no /livez yet)"))

        # Three devices: one accepted, one gone (410: token.invalid), one answered 503 once (a retry
        # through the 1s delay queue, then accepted); rules set over the sandbox's control API.
        tokens = {name: f"de{index:02x}0e{nonce:08x}".ljust(64, "0") for index, name in enumerate(("ok", "gone", "busy"))}
        control(root, sandbox_port, "PUT", "rules", [
            {"token": tokens["gone"], "status": 410, "reason": "Unregistered"},
            {"token": tokens["busy"], "status": 503, "reason": "ServiceUnavailable", "times": 1}])
        sent = subprocess.run([args.binary, "send", "--amqp-url", AMQP_URL, "--job-queue", queue,
                               *[arg for t in tokens.values() for arg in ("--token", t)],
                               "--alert", "deploy-check", "--wait", "--wait-seconds", "20"],
                              env=clean_env(), capture_output=True, text=True, timeout=40)
        completed = [json.loads(line[line.index("{"):]) for line in sent.stdout.splitlines()
                     if "{" in line and '"job.completed"' in line]
        if sent.returncode != 0 or not completed:
            failures.append(f"pushworker send --wait exited {sent.returncode} without job.completed: "
                            f"{(sent.stdout + sent.stderr).strip()[-600:]}")
        else:
            event = completed[0]
            counts = {k: event.get(k) for k in ("devices", "sent", "invalid", "retried", "failed")}
            say("job.completed: " + ", ".join(f"{k} {v}" for k, v in counts.items()))
            if counts != {"devices": 3, "sent": 1, "invalid": 1, "retried": 1, "failed": 0}:
                failures.append(f"job.completed: expected devices 3, sent 1, invalid 1, retried 1, failed 0: {event}")
        expected = {"ok": [200], "gone": [410], "busy": [503, 200]}
        deadline = time.monotonic() + 20
        while True:
            records = [json.loads(line) for line in control(root, sandbox_port, "GET", "received").splitlines() if line.strip()]
            seen = {name: [r.get("status") for r in records if r.get("token") == t] for name, t in tokens.items()}
            if seen == expected or time.monotonic() > deadline:
                break
            time.sleep(0.2)
        if seen != expected:
            failures.append(f"the sandbox recorded {seen}, expected {expected}")
        else:
            say("the sandbox recorded 200, 410, and 503 then 200 after the retry")

        if has_metrics:
            code, text = get(f"http://127.0.0.1:{status_port}/metrics")
            problems, absent = metrics_problems(text)
            if code != 200 or problems:
                failures.append(f"/metrics (HTTP {code}) does not match the dashboard's list: {'; '.join(problems)}")
            else:
                say(f"/metrics: {len(WORKER) - len(absent)} of the dashboard's {len(WORKER)} metrics, with their types "
                    f"and labels" + (f"; no series yet (labelled, nothing counted): {', '.join(absent)}" if absent else ""))
        else:
            say("this binary has no /metrics yet: the dashboard's metric names are checked against the list only")


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
        if sandbox.poll() is not None:
            failures.append(f"the sandbox ended early with {sandbox.returncode}; see {work / 'sandbox.log'}")
    finally:
        if worker is not None:
            stop(worker, "worker", timeout=stop_timeout)
        if sandbox is not None:
            stop(sandbox, "sandbox", timeout=15)
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
