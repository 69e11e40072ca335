"""`ops/bench --gateway`: what a job costs through `pushworker gateway` (HTTP, checked by the
worker's parser, published with confirms) next to a plain publish of the same jobs to RabbitMQ.

No worker runs: both put N one-token jobs into a queue of their own, and the run checks the
queue holds exactly N afterwards.
  plain    amqp-publish -l (amqp-tools: one connection, pipelined, no confirms), the cheapest way in
  gateway  h2load --h1 (nghttp2-client) posts the same job to POST /v1/jobs over C connections;
           every answer must be 202, each given only after the broker's confirm
Reported: jobs/s by the wall clock, CPU per job of the publisher (amqp-publish; the gateway) and
of the broker (beam.smp's utime + stime over the run), and the gateway's peak RSS.
"""
import json
import os
import re
import secrets
import subprocess
import time

from .errors import OpsError
from .log import log
from .processes import clean_env, log_tail, proc_cpu_seconds, proc_status, spawn, stop

QUEUE = "bench.gateway.jobs"
LISTENING = re.compile(rb"listen=127\.0\.0\.1:(\d+).*gateway listening")


def job(n):
    return json.dumps({"tokens": [f"{n:016x}" + "ab" * 24], "payload": {"aps": {"alert": "benchmark"}}}).encode()


def _queue_depth(broker):
    ready = broker.ready([QUEUE])
    if ready is None:
        raise OpsError("RabbitMQ did not answer")
    return ready[QUEUE]


def _wait_depth(broker, expected, timeout=120):
    deadline = time.monotonic() + timeout
    depth = -1
    while time.monotonic() < deadline:
        depth = _queue_depth(broker)
        if depth >= expected:
            break
        time.sleep(0.1)
    if depth != expected:
        raise OpsError(f"{QUEUE} holds {depth} jobs, expected {expected}")


def _reset(broker):
    broker.delete(queues=[QUEUE], exchanges=[])
    broker.call(lambda ch: ch.queue_declare(QUEUE, durable=True), attempts=3)


def plain(broker, beam, amqp_port, count):
    _reset(broker)
    lines = b"".join(job(n) + b"\n" for n in range(count))
    beam_before = proc_cpu_seconds(beam)
    before = os.times()
    started = time.monotonic()
    result = subprocess.run(["amqp-publish", "-u", f"amqp://guest:guest@127.0.0.1:{amqp_port}", "-r", QUEUE, "-p",
                             "-C", "application/json", "-l"], input=lines, capture_output=True, timeout=600)
    if result.returncode != 0:
        raise OpsError(f"amqp-publish failed: {result.stderr.decode(errors='replace')}")
    _wait_depth(broker, count)
    wall = time.monotonic() - started
    after = os.times()
    publisher_cpu = (after.children_user - before.children_user) + (after.children_system - before.children_system)
    beam_cpu = proc_cpu_seconds(beam) - beam_before
    return {"way": "plain publish (amqp-publish -l, no confirms)", "jobs": count, "seconds": wall, "jobs_per_second": count / wall,
            "publisher_cpu_us_per_job": publisher_cpu * 1e6 / count, "broker_cpu_us_per_job": beam_cpu * 1e6 / count}


def gateway(broker, beam, binary, tmp, amqp_port, redis_port, count, clients):
    _reset(broker)
    key = secrets.token_urlsafe(32)
    config = os.path.join(tmp, "gateway-bench.yaml")
    with open(config, "w") as f:
        f.write(f"amqp: {{url: 'amqp://guest:guest@127.0.0.1:{amqp_port}/'}}\nredis: {{url: 'redis://127.0.0.1:{redis_port}/0'}}\n"
                f"worker: {{job_queue: {QUEUE}}}\n"
                "apps:\n  - {name: default, platform: apns, topic: com.example.app, "
                "token: {key_file: /unused.p8, key_id: ABCDE12345, team_id: TEAM123456}}\n"
                "gateway:\n  api_keys:\n    - {name: bench, key: {env: GATEWAY_BENCH_KEY}, apps: '*', requests_per_second: 1000000}\n")
    log_path = os.path.join(tmp, "gateway-bench.log")
    process = spawn("gateway", [binary, "gateway", "--config", config, "--listen", "127.0.0.1:0"],
                    log_path, env=clean_env({"GATEWAY_BENCH_KEY": key}))
    try:
        deadline = time.monotonic() + 60
        port = None
        while port is None:
            with open(log_path, "rb") as f:
                match = LISTENING.search(f.read())
            if match:
                port = int(match.group(1))
            elif process.poll() is not None or time.monotonic() > deadline:
                raise OpsError(f"the gateway did not start:\n{log_tail(log_path)}")
            else:
                time.sleep(0.1)
        body = os.path.join(tmp, "gateway-bench-job.json")
        with open(body, "wb") as f:
            f.write(job(0))
        gateway_before, beam_before = proc_cpu_seconds(process.pid), proc_cpu_seconds(beam)
        started = time.monotonic()
        result = subprocess.run(["h2load", "--h1", "-n", str(count), "-c", str(clients), "-d", body,
                                 "-H", f"authorization: Bearer {key}", "-H", "content-type: application/json",
                                 f"http://127.0.0.1:{port}/v1/jobs"], capture_output=True, text=True, timeout=900)
        wall = time.monotonic() - started
        gateway_cpu = proc_cpu_seconds(process.pid) - gateway_before
        beam_cpu = proc_cpu_seconds(beam) - beam_before
        rss_kb = proc_status(process.pid, "VmHWM")
        codes = re.search(r"status codes: (\d+) 2xx, (\d+) 3xx, (\d+) 4xx, (\d+) 5xx", result.stdout)
        if result.returncode != 0 or not codes or int(codes.group(1)) != count:
            raise OpsError(f"h2load: not every request was answered 2xx:\n{result.stdout[-2000:]}{result.stderr[-1000:]}")
        _wait_depth(broker, count)
        return {"way": f"gateway (POST /v1/jobs, h2load --h1 -c {clients})", "jobs": count, "seconds": wall,
                "jobs_per_second": count / wall, "publisher_cpu_us_per_job": gateway_cpu * 1e6 / count,
                "broker_cpu_us_per_job": beam_cpu * 1e6 / count, "gateway_peak_rss_mb": (rss_kb or 0) / 1024}
    finally:
        stop(process, "gateway", timeout=30)
        broker.delete(queues=[QUEUE], exchanges=[])


def run(broker, beam, binary, tmp, amqp_port, redis_port, count, clients):
    log(f"gateway benchmark: {count:,} one-token jobs each way")
    rows = [plain(broker, beam, amqp_port, count), gateway(broker, beam, binary, tmp, amqp_port, redis_port, count, clients)]
    return rows


def table(rows):
    lines = ["| way in | jobs | jobs/s | publisher CPU µs/job | broker CPU µs/job | gateway peak RSS |",
             "| --- | ---: | ---: | ---: | ---: | ---: |"]
    for row in rows:
        rss = f"{row['gateway_peak_rss_mb']:.0f} MB" if "gateway_peak_rss_mb" in row else "–"
        lines.append(f"| {row['way']} | {row['jobs']:,} | {row['jobs_per_second']:,.0f} | {row['publisher_cpu_us_per_job']:.1f} "
                     f"| {row['broker_cpu_us_per_job']:.1f} | {rss} |")
    return "\n".join(lines)
