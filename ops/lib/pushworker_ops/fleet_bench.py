"""`ops/bench --fleet` and `ops/bench --fleet-matrix`: several workers on one backlog, and what a
job costs the broker per queue type and completion-event setting. The figures behind
README.md "Capacity planning" (docs/guides/scaling.md).

--fleet: for each worker count (--fleet-workers, default 1,2,4) the same backlog (--fleet-jobs
one-token jobs, default 100,000, and --fleet-bulk-jobs jobs of 100 tokens, default 500, spread
through it) is published to bench.fleet.jobs with amqp-publish -l and checked with a passive
queue.declare; then that many `pushworker run` start at once with the worker's defaults (only the
sandbox's URL, CA and key, the queue and exchange names, --stats-file and --status-port are
given), and the run waits until the sandbox has accepted every notification and the workers
have settled every job, then stops them with SIGTERM and reaps each with wait4. Reported:
  notifications/s     accepted / (last - first request time) from GET /_sandbox/stats
  per worker          its share (`sent` in its --stats-file), CPU (user + sys from wait4's rusage)
                      per notification it sent, peak RSS (VmHWM, read until it exits), and its TCP
                      connections (ESTABLISHED, from /proc/PID/fd and /proc/PID/net/tcp, the most
                      seen while it ran) to the sandbox (APNs), RabbitMQ and Redis
  broker CPU per job  beam.smp's utime + stime while the backlog was published, and from the
                      workers' start to their exit, each divided by the jobs
  correctness         GET /_sandbox/received: every device accepted (lost = 0), devices accepted
                      more than once (must stay within the in-flight bound; 0 expected without
                      faults), and every worker sent a nonzero share
  load                os.getloadavg() before the run and its highest 1-minute value during it,
                      and "others": CPU used during the run by anything but the workers, RabbitMQ,
                      Redis and the sandbox, as a share of all cores
The run fails (exit 1) if a correctness check fails, or if the rate with more workers is below
--fleet-min-ratio (0.85) of the 1-worker rate: on 2 cores more workers cannot scale, but the
rate must not collapse.

--fleet-matrix: one worker over the one-token backlog for each of {classic, quorum} x
{--completion-events all, none}. For quorum the job queue is declared before publishing exactly
as the worker declares it (x-queue-type quorum, x-delivery-limit 20, dead-lettering to
<queue>.dead), so the backlog waits in the same queue the worker then consumes.

--fleet also measures Redis's memory for a group of --fleet-redis-tokens (1,000,000) tokens:
MEMORY USAGE of one set key (SAMPLES 0: every member) holding 64-hex APNs tokens, then 150-char
FCM-like tokens, and INFO memory's used_memory before and after, with Redis's default encoding.
The keys are bench.fleet:* and are deleted afterwards.
"""
import base64
import json
import os
import random
import shutil
import subprocess
import time
import urllib.request

from .errors import OpsError
from .log import log
from .processes import clean_env, log_tail, proc_cpu_seconds, proc_status, spawn, stop
from .sandbox import Sandbox

QUEUE = "bench.fleet.jobs"
EXCHANGE = "bench.fleet.results"
REDIS_PREFIX = "bench.fleet:"
TOPIC = "com.example.app"
BULK_TOKENS = 100
MAX_IN_FLIGHT = 4000      # the worker's default --max-in-flight
CHUNK_SIZE = 1000         # the worker's default --chunk-size
BULK_PREFETCH = 10        # the bulk lane's fixed prefetch
DELIVERY_LIMIT = 20       # the worker's x-delivery-limit on a quorum job queue


class FleetError(OpsError):
    pass


class Settings:
    """What the runs need from ops/bench: ports, services, timeouts."""
    def __init__(self, broker, services, binary, tmp, amqp_port, redis_port, timeout=900, stall_timeout=60,
                 shutdown_timeout=60, latency_ms=0, quiet_wait=120, max_load=1.5, load_wait=600, worker_args=()):
        self.broker, self.services, self.binary, self.tmp = broker, services, binary, tmp
        self.amqp_port, self.redis_port = amqp_port, redis_port
        self.timeout, self.stall_timeout, self.shutdown_timeout = timeout, stall_timeout, shutdown_timeout
        self.latency_ms, self.quiet_wait, self.max_load, self.load_wait = latency_ms, quiet_wait, max_load, load_wait
        self.worker_args = list(worker_args)     # extra `pushworker run` options (none: the defaults)


# ---------------------------------------------------------------------------------------------
# The machine: how busy it is with other work

def _cpu_totals():
    """(all jiffies, busy jiffies) of the machine from /proc/stat."""
    with open("/proc/stat") as f:
        values = [int(v) for v in f.readline().split()[1:]]
    return sum(values), sum(values) - values[3] - values[4]


def _busy_share(seconds):
    total0, busy0 = _cpu_totals()
    time.sleep(seconds)
    total1, busy1 = _cpu_totals()
    return (busy1 - busy0) / max(1, total1 - total0)


def wait_for_low_load(max_load, max_wait):
    """Before the runs: waits (at most max_wait s, polling) until the 1-minute load average is at or
    below max_load. Returns what it saw: the load before and after waiting and the seconds waited."""
    started = time.monotonic()
    first = os.getloadavg()
    load = first
    if load[0] > max_load:
        log(f"1-minute load {load[0]:.2f} > {max_load}: waiting up to {max_wait:.0f}s for the machine to calm down")
    while load[0] > max_load and time.monotonic() - started < max_wait:
        time.sleep(10)
        load = os.getloadavg()
    waited = time.monotonic() - started
    if load[0] > max_load:
        log(f"  still {load[0]:.2f} after {waited:.0f}s; measuring anyway (the figures will be noisy)")
    return {"load_first": [round(x, 2) for x in first], "load_after_wait": [round(x, 2) for x in load],
            "waited_seconds": round(waited)}


def wait_for_quiet(max_wait, threshold=0.10):
    """Before each run: waits (at most max_wait s) until the machine's CPU is < threshold busy (the
    1-minute load would still carry the previous run). Returns the busy share seen last."""
    deadline = time.monotonic() + max_wait
    busy = _busy_share(1.0)
    if busy >= threshold:
        log(f"  machine {busy:.0%} busy; waiting up to {max_wait:.0f}s for it to calm down")
    while busy >= threshold and time.monotonic() < deadline:
        busy = _busy_share(2.0)
    if busy >= threshold:
        log(f"  still {busy:.0%} busy; measuring anyway")
    return round(busy, 3)


# ---------------------------------------------------------------------------------------------
# RabbitMQ

def _fleet_queues(settings):
    """Every queue of ours: bench.fleet.jobs and whatever the workers declared beside it (bulk,
    dead, retry.* or delay), as rabbitmqctl lists them, plus the names we know."""
    known = {QUEUE, QUEUE + ".bulk", QUEUE + ".dead", QUEUE + ".delay", EXCHANGE + ".unrouted"}
    listed = settings.services.rabbitmqctl("list_queues", "name", timeout=60) or ""
    for line in listed.splitlines():
        name = line.strip()
        if name.startswith(QUEUE + ".") or name in (QUEUE, EXCHANGE + ".unrouted"):
            known.add(name)
    return sorted(known)


def delete_topology(settings):
    if not settings.broker.delete(queues=_fleet_queues(settings), exchanges=[EXCHANGE, EXCHANGE + ".unrouted"]):
        raise FleetError("RabbitMQ did not answer")


def quorum_arguments():
    """The job queue's arguments as `pushworker run --queue-type quorum` declares them."""
    return {"x-queue-type": "quorum", "x-delivery-limit": DELIVERY_LIMIT, "x-dead-letter-exchange": "",
            "x-dead-letter-routing-key": QUEUE + ".dead"}


def declare_job_queue(settings, queue_type):
    """A fresh job queue, declared as the worker declares it, so that the backlog can wait in it
    before the worker starts (with a quorum queue a publisher must not declare it otherwise)."""
    delete_topology(settings)
    arguments = quorum_arguments() if queue_type == "quorum" else None
    if not settings.broker.call(lambda ch: ch.queue_declare(QUEUE, durable=True, arguments=arguments), attempts=3):
        raise FleetError("RabbitMQ did not answer")


def _depth(settings):
    ready = settings.broker.ready([QUEUE])
    if ready is None:
        raise FleetError("RabbitMQ did not answer")
    return ready[QUEUE]


def publish_backlog(settings, lines, beam):
    """amqp-publish -l of every line, then waits until the queue holds them all. Returns
    (seconds, beam.smp CPU seconds over the publish)."""
    beam_before = proc_cpu_seconds(beam)
    started = time.monotonic()
    result = subprocess.run(["amqp-publish", "-u", f"amqp://guest:guest@127.0.0.1:{settings.amqp_port}", "-r", QUEUE,
                             "-p", "-C", "application/json", "-l"],
                            input=b"".join(line + b"\n" for line in lines), capture_output=True, timeout=settings.timeout)
    if result.returncode != 0:
        raise FleetError(f"amqp-publish failed: {result.stderr.decode(errors='replace')}")
    deadline = time.monotonic() + settings.timeout
    depth = -1
    while time.monotonic() < deadline:
        depth = _depth(settings)
        if depth >= len(lines):
            break
        time.sleep(0.2)
    if depth != len(lines):
        raise FleetError(f"{QUEUE} holds {depth} jobs after publishing, expected {len(lines)}")
    return time.monotonic() - started, proc_cpu_seconds(beam) - beam_before


# ---------------------------------------------------------------------------------------------
# The backlog

def make_backlog(one_token_jobs, bulk_jobs, seed=31):
    """(job lines, every token) with the 100-token jobs spread evenly through the one-token ones.
    Tokens are distinct random 64-hex strings, the same for every run."""
    rng = random.Random(seed)
    total = one_token_jobs + bulk_jobs * BULK_TOKENS
    tokens = list(dict.fromkeys("%064x" % rng.getrandbits(256) for _ in range(total)))
    if len(tokens) != total:
        raise FleetError("token collision; change the seed")
    singles = [_job_line(tokens[i:i + 1]) for i in range(one_token_jobs)]
    bulks = [_job_line(tokens[one_token_jobs + i * BULK_TOKENS:one_token_jobs + (i + 1) * BULK_TOKENS])
             for i in range(bulk_jobs)]
    lines = []
    every = max(1, one_token_jobs // max(1, bulk_jobs))
    for i, line in enumerate(singles):
        lines.append(line)
        if bulks and (i + 1) % every == 0:
            lines.append(bulks.pop())
    lines += bulks
    return lines, tokens


def _job_line(tokens):
    return json.dumps({"tokens": tokens, "payload": {"aps": {"alert": "Hello"}}}, separators=(",", ":")).encode()


# ---------------------------------------------------------------------------------------------
# Workers

def _free_port():
    import socket
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Worker:
    def __init__(self, settings, sandbox, name, queue_type="classic", completion_events="all"):
        self.name = name
        self.stats_file = os.path.join(settings.tmp, f"stats-{name}.json")
        self.log_path = os.path.join(settings.tmp, f"worker-{name}.log")
        for path in (self.stats_file, self.log_path):
            if os.path.exists(path):
                os.remove(path)
        self.status_port = _free_port()
        argv = [settings.binary, "run", "--job-queue", QUEUE, "--results-exchange", EXCHANGE,
                "--amqp-url", f"amqp://guest:guest@127.0.0.1:{settings.amqp_port}/",
                "--redis-url", f"redis://127.0.0.1:{settings.redis_port}/0",
                "--apns-url", sandbox.url, "--apns-ca-file", sandbox.ca, "--apns-key-file", sandbox.key,
                "--apns-key-id", "SANDBOXKEY", "--apns-team-id", "SANDBOXTM1", "--apns-topic", TOPIC,
                "--stats-file", self.stats_file, "--status-port", str(self.status_port), "--log-level", "warning"]
        if queue_type != "classic":
            argv += ["--queue-type", queue_type]
        if completion_events != "all":
            argv += ["--completion-events", completion_events]
        self.argv = argv + settings.worker_args
        self.process = spawn(f"worker {name}", self.argv, self.log_path, env=clean_env())
        self.peak_kb = 0
        self.connections = {}       # peer port -> most ESTABLISHED connections seen at once
        self.code = self.rusage = None

    def sample(self, ports):
        self.peak_kb = max(self.peak_kb, proc_status(self.process.pid, "VmHWM") or 0)
        for port, count in tcp_peers(self.process.pid, ports).items():
            self.connections[port] = max(self.connections.get(port, 0), count)

    def status(self):
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{self.status_port}/status", timeout=5) as answer:
                return json.loads(answer.read())
        except (OSError, ValueError):
            return None

    def stop(self, timeout):
        ended = stop(self.process, f"worker {self.name}", timeout=timeout,
                     on_poll=lambda: setattr(self, "peak_kb", max(self.peak_kb, proc_status(self.process.pid, "VmHWM") or 0)))
        self.code, self.rusage = ended.code, ended.rusage
        if self.code != 0 or ended.killed:
            raise FleetError(f"worker {self.name} exited with {self.code} after SIGTERM:\n{log_tail(self.log_path)}")
        try:
            with open(self.stats_file) as f:
                self.stats = json.load(f)
        except (OSError, ValueError) as error:
            raise FleetError(f"no stats from worker {self.name}: {error}") from error
        return self.stats

    def reconnects(self):
        """AMQP connections lost during the run, from the worker's log (warning level)."""
        try:
            with open(self.log_path, errors="replace") as f:
                return sum("AMQP connection lost" in line for line in f)
        except OSError:
            return 0

    @property
    def cpu_seconds(self):
        return self.rusage.ru_utime + self.rusage.ru_stime


def tcp_peers(pid, ports):
    """ESTABLISHED TCP connections of one process to each of `ports` (by the peer's port)."""
    inodes = set()
    try:
        for fd in os.listdir(f"/proc/{pid}/fd"):
            try:
                target = os.readlink(f"/proc/{pid}/fd/{fd}")
            except OSError:
                continue
            if target.startswith("socket:["):
                inodes.add(target[8:-1])
        counts = {}
        for table in ("tcp", "tcp6"):
            with open(f"/proc/{pid}/net/{table}") as f:
                next(f)
                for line in f:
                    fields = line.split()
                    if fields[3] != "01" or fields[9] not in inodes:      # 01 = ESTABLISHED
                        continue
                    port = int(fields[2].rsplit(":", 1)[1], 16)
                    if port in ports:
                        counts[port] = counts.get(port, 0) + 1
        return counts
    except OSError:
        return {}


# ---------------------------------------------------------------------------------------------
# One run: the backlog, N workers, the verdict

def run_once(settings, sandbox, lines, tokens, workers, label, queue_type="classic", completion_events="all"):
    beam = settings.services.rabbitmq_pid()
    redis_pid = settings.services.redis_pid()
    run_started = time.monotonic()
    declare_job_queue(settings, queue_type)
    publish_seconds, publish_beam_cpu = publish_backlog(settings, lines, beam)
    log(f"  published {len(lines):,} jobs ({len(tokens):,} devices) to {QUEUE} in {publish_seconds:.1f}s")
    quiet_started = time.monotonic()
    busy_before = wait_for_quiet(settings.quiet_wait)
    quiet_seconds = time.monotonic() - quiet_started
    load_before = os.getloadavg()
    sandbox.reset()
    if sandbox.stats()["requests"] != 0:
        raise FleetError("the sandbox did not reset")
    beam_before = proc_cpu_seconds(beam)
    sandbox_before = proc_cpu_seconds(sandbox.process.pid)
    redis_before = proc_cpu_seconds(redis_pid) if redis_pid else 0.0
    machine_before = _cpu_totals()
    drain_started = time.monotonic()
    fleet = [Worker(settings, sandbox, f"{label}-{i + 1}", queue_type, completion_events) for i in range(workers)]
    ports = {sandbox.port, settings.amqp_port, settings.redis_port}
    load_max = load_before[0]
    try:
        stats = _wait_accepted(settings, sandbox, fleet, len(tokens), ports)
        load_max = max(load_max, os.getloadavg()[0])
        _wait_settled(settings, fleet, len(lines), ports)
        load_max = max(load_max, os.getloadavg()[0])
        for worker in fleet:
            worker.sample(ports)
            worker.stop(settings.shutdown_timeout)
    except BaseException:
        for worker in fleet:
            log(f"worker {worker.name} log tail:\n{log_tail(worker.log_path)}")
        raise
    drain_wall = time.monotonic() - drain_started
    beam_cpu = proc_cpu_seconds(beam) - beam_before
    sandbox_cpu = proc_cpu_seconds(sandbox.process.pid) - sandbox_before
    redis_cpu = (proc_cpu_seconds(redis_pid) - redis_before) if redis_pid else 0.0
    machine_after = _cpu_totals()
    machine_busy = (machine_after[1] - machine_before[1]) / max(1, machine_after[0] - machine_before[0])
    workers_cpu = sum(w.cpu_seconds for w in fleet)
    cores = os.cpu_count() or 1
    others = max(0.0, machine_busy * cores * drain_wall - workers_cpu - beam_cpu - sandbox_cpu - redis_cpu)
    verdict = check_received(sandbox.received(), tokens, workers)
    accepted, span = stats["accepted"], max(1, stats["last_request_at_ms"] - stats["first_request_at_ms"]) / 1000
    jobs = len(lines)
    per_worker = [{
        "sent": w.stats["sent"], "jobs": w.stats["jobs"], "failed": w.stats["failed"], "invalid": w.stats["invalid"],
        "retried": w.stats["retried"], "share": w.stats["sent"] / max(1, len(tokens)),
        "cpu_seconds": round(w.cpu_seconds, 3), "cpu_us_per_notification": w.cpu_seconds * 1e6 / max(1, w.stats["sent"]),
        "peak_rss_kb": w.peak_kb,
        "connections": {"apns": w.connections.get(sandbox.port, 0), "amqp": w.connections.get(settings.amqp_port, 0),
                        "redis": w.connections.get(settings.redis_port, 0)},
        "latency_p50_ms": w.stats["latency_p50_us"] / 1000, "latency_p99_ms": w.stats["latency_p99_us"] / 1000,
    } for w in fleet]
    sent = sum(w["sent"] for w in per_worker)
    problems = list(verdict["problems"])
    if sent != accepted:
        problems.append(f"the workers report {sent:,} sent, the sandbox accepted {accepted:,}")
    if any(w["failed"] or w["invalid"] for w in per_worker):
        problems.append("a worker reports failed or invalid devices")
    if any(w["sent"] == 0 for w in per_worker):
        problems.append("a worker sent nothing: the work was not shared")
    return {
        "label": label, "workers": workers, "queue_type": queue_type, "completion_events": completion_events,
        "worker_args": settings.worker_args, "amqp_reconnects": sum(w.reconnects() for w in fleet),
        "jobs": jobs, "notifications": len(tokens), "accepted": accepted, "seconds": span, "rate": accepted / span,
        "publish_seconds": round(publish_seconds, 2), "publish_jobs_per_second": jobs / publish_seconds,
        "broker_cpu_us_per_job_publish": publish_beam_cpu * 1e6 / jobs,
        "broker_cpu_us_per_job_drain": beam_cpu * 1e6 / jobs,
        "broker_cpu_us_per_job": (publish_beam_cpu + beam_cpu) * 1e6 / jobs,
        "workers_cpu_us_per_notification": workers_cpu * 1e6 / max(1, accepted),
        "sandbox_cpu_us_per_notification": sandbox_cpu * 1e6 / max(1, accepted),
        "redis_cpu_us_per_notification": redis_cpu * 1e6 / max(1, accepted),
        "per_worker": per_worker,
        "lost": verdict["lost"], "duplicates": verdict["duplicates"], "duplicate_bound": verdict["bound"],
        "unexpected": verdict["unexpected"],
        "load_before": [round(x, 2) for x in load_before], "load_1min_max_during": round(load_max, 2),
        "machine_busy_before": busy_before, "machine_busy_during": round(machine_busy, 3),
        "others_share": round(others / max(0.001, drain_wall * cores), 3),
        "drain_wall_seconds": round(drain_wall, 2), "quiet_wait_seconds": round(quiet_seconds, 1),
        # publish + drain + checks, without the wait for a quiet machine
        "run_wall_seconds": round(time.monotonic() - run_started - quiet_seconds, 1),
        "sandbox_connections_accepted": stats["connections_accepted"],
        "max_concurrent_streams_seen": stats["max_concurrent_streams_seen"],
        "problems": problems, "ok": not problems,
    }


def _wait_accepted(settings, sandbox, fleet, expected, ports):
    """Polls the sandbox until `expected` notifications were accepted; bounded in time and by progress.
    Samples the workers (peak RSS, connections) meanwhile."""
    started = time.monotonic()
    last_progress, last_count, last_log = started, -1, started
    while True:
        for worker in fleet:
            if worker.process.poll() is not None:
                raise FleetError(f"worker {worker.name} exited ({worker.process.returncode}):\n{log_tail(worker.log_path)}")
            worker.sample(ports)
        stats = sandbox.stats()
        if stats["rejected"] or stats["stalls"]:
            raise FleetError(f"the sandbox rejected notifications: {stats}")
        count, now = stats["accepted"], time.monotonic()
        if count >= expected:
            return stats
        if count != last_count:
            last_count, last_progress = count, now
        if now - last_progress > settings.stall_timeout:
            raise FleetError(f"no progress for {settings.stall_timeout:.0f}s: {count:,}/{expected:,} accepted")
        if now - started > settings.timeout:
            raise FleetError(f"timed out after {settings.timeout:.0f}s: {count:,}/{expected:,} accepted")
        if now - last_log > 15:
            log(f"  … {count:,}/{expected:,}")
            last_log = now
        time.sleep(0.5)


def _wait_settled(settings, fleet, jobs, ports, timeout=60):
    """After the last acceptance: waits (at most `timeout` s) until the workers' /status counts
    every job as settled, so that SIGTERM ends idle workers."""
    deadline = time.monotonic() + timeout
    settled = -1
    while time.monotonic() < deadline:
        statuses = [w.status() for w in fleet]
        for worker in fleet:
            worker.sample(ports)
        if all(statuses):
            settled = sum(s["jobs"] + s["rejected"] for s in statuses)
            if settled >= jobs:
                return
        time.sleep(0.3)
    log(f"  warning: the workers settled {settled:,} of {jobs:,} jobs within {timeout}s; stopping them anyway")


def check_received(received, tokens, workers):
    """Every device accepted once: lost, duplicates (accepted more than once) against the in-flight
    bound (README "Delivery guarantees": per worker about 2 x --max-in-flight, plus the bulk lane's
    chunk jobs), and accepted tokens that were never published."""
    counts = {}
    for record in received:
        if record.get("status") == 200:
            counts[record["token"]] = counts.get(record["token"], 0) + 1
    expected = set(tokens)
    lost = len(expected - counts.keys())
    duplicates = sum(n - 1 for token, n in counts.items() if n > 1)
    unexpected = len(counts.keys() - expected)
    bound = workers * (2 * MAX_IN_FLIGHT + BULK_PREFETCH * CHUNK_SIZE)
    problems = []
    if lost:
        problems.append(f"{lost:,} devices never accepted")
    if duplicates > bound:
        problems.append(f"{duplicates:,} duplicates, above the in-flight bound {bound:,}")
    if unexpected:
        problems.append(f"{unexpected:,} accepted tokens were never published")
    return {"lost": lost, "duplicates": duplicates, "bound": bound, "unexpected": unexpected, "problems": problems}


# ---------------------------------------------------------------------------------------------
# The modes

def _sandbox(settings):
    sandbox = Sandbox(settings.binary, os.path.join(settings.tmp, "sandbox-state"),
                      os.path.join(settings.tmp, "sandbox.log"), latency_ms=settings.latency_ms,
                      name=f"sandbox ({settings.latency_ms} ms)")
    sandbox.start(timeout=60)
    sandbox.stats()
    log(f"sandbox (latency {settings.latency_ms} ms) on {sandbox.url}")
    return sandbox


def _summary(row):
    shares = "/".join(f"{w['sent']:,}" for w in row["per_worker"])
    cpu = "/".join(f"{w['cpu_us_per_notification']:.1f}" for w in row["per_worker"])
    return (f"{row['rate']:,.0f} notif/s, shares {shares}, worker µs/notif {cpu}, broker µs/job "
            f"{row['broker_cpu_us_per_job_publish']:.0f} publish + {row['broker_cpu_us_per_job_drain']:.0f} drain, "
            f"lost {row['lost']}, duplicates {row['duplicates']}, AMQP reconnects {row['amqp_reconnects']}, load {row['load_before'][0]:.2f} -> "
            f"max {row['load_1min_max_during']:.2f}, others {row['others_share']:.0%}, run {row['run_wall_seconds']:.0f}s")


def run_fleet(settings, worker_counts, one_token_jobs, bulk_jobs, min_ratio):
    """The same backlog for each worker count. Returns (rows, checks)."""
    lines, tokens = make_backlog(one_token_jobs, bulk_jobs)
    log(f"fleet: {len(lines):,} jobs ({one_token_jobs:,} x 1 token, {bulk_jobs:,} x {BULK_TOKENS}), "
        f"{len(tokens):,} devices, workers {worker_counts}")
    sandbox = _sandbox(settings)
    rows = []
    try:
        for count in worker_counts:
            log(f"{count} worker(s)")
            row = run_once(settings, sandbox, lines, tokens, count, f"fleet{count}")
            log("  " + _summary(row))
            rows.append(row)
    finally:
        sandbox.stop()
        delete_topology(settings)
    return rows, fleet_checks(rows, min_ratio)


def fleet_checks(rows, min_ratio):
    checks = []
    base = next((r for r in rows if r["workers"] == 1), None)
    for row in rows:
        checks.append({"check": f"{row['workers']} worker(s): every device accepted, duplicates within the bound, "
                                f"every worker sent a share", "ok": row["ok"],
                       "value": "; ".join(row["problems"]) or
                       f"lost 0, duplicates {row['duplicates']} (bound {row['duplicate_bound']:,}), "
                       f"shares {'/'.join(str(w['sent']) for w in row['per_worker'])}"})
        if base and row is not base:
            ratio = row["rate"] / base["rate"]
            row["rate_vs_1_worker"] = ratio
            checks.append({"check": f"{row['workers']} workers: rate >= {min_ratio:.0%} of 1 worker's",
                           "ok": ratio >= min_ratio, "value": f"{ratio:.2f}"})
    return checks


def run_matrix(settings, one_token_jobs, queue_types=("classic", "quorum"), completions=("all", "none")):
    """One worker over the one-token backlog per queue type and completion-event setting."""
    lines, tokens = make_backlog(one_token_jobs, 0)
    log(f"matrix: {len(lines):,} one-token jobs, one worker, queue types {list(queue_types)} x "
        f"completion events {list(completions)}")
    sandbox = _sandbox(settings)
    rows = []
    try:
        for queue_type in queue_types:
            for completion in completions:
                log(f"{queue_type} queue, --completion-events {completion}")
                row = run_once(settings, sandbox, lines, tokens, 1, f"{queue_type}-{completion}", queue_type, completion)
                log("  " + _summary(row))
                rows.append(row)
    finally:
        sandbox.stop()
        delete_topology(settings)
    checks = [{"check": f"{r['queue_type']}/{r['completion_events']}: every device accepted once", "ok": r["ok"],
               "value": "; ".join(r["problems"]) or f"lost 0, duplicates {r['duplicates']}"} for r in rows]
    return rows, checks


def redis_memory(redis_port, count):
    """MEMORY USAGE of one set of `count` tokens (64-hex APNs, then 150-char FCM-like) and the
    used_memory delta, with Redis's default encoding. The keys are deleted afterwards."""
    from . import redis_client
    client = redis_client.connect(redis_port, timeout=300)
    rows = []
    try:
        kinds = [("apns", 64, lambda: os.urandom(32).hex()),
                 ("fcm-like", 150, lambda: base64.urlsafe_b64encode(os.urandom(113)).decode()[:150])]
        for kind, length, make in kinds:
            key = f"{REDIS_PREFIX}memory:{kind}"
            client.delete(key)
            time.sleep(0.5)
            before = client.info("memory")["used_memory"]
            started = time.monotonic()
            pipe = client.pipeline(transaction=False)
            for start in range(0, count, 1000):
                pipe.sadd(key, *[make() for _ in range(min(1000, count - start))])
                if len(pipe) >= 50:
                    pipe.execute()
            pipe.execute()
            fill_seconds = time.monotonic() - started
            members = client.scard(key)
            encoding = client.object("encoding", key)
            usage = client.memory_usage(key, samples=0)
            after = client.info("memory")["used_memory"]
            version = client.info("server")["redis_version"]
            client.delete(key)
            row = {"kind": kind, "token_chars": length, "members": members,
                   "encoding": encoding.decode() if isinstance(encoding, bytes) else encoding,
                   "memory_usage_bytes": usage, "used_memory_delta_bytes": after - before,
                   "bytes_per_token": usage / max(1, members),
                   "memory_usage_mb_per_million": usage / max(1, members) * 1e6 / 2**20,
                   "fill_seconds": round(fill_seconds, 1), "redis_version": version}
            log(f"redis: {members:,} {kind} tokens ({length} chars): MEMORY USAGE {usage / 2**20:.1f} MiB "
                f"({row['bytes_per_token']:.0f} B/token), used_memory +{(after - before) / 2**20:.1f} MiB, {row['encoding']}")
            rows.append(row)
    finally:
        try:
            client.delete(*[f"{REDIS_PREFIX}memory:{k}" for k in ("apns", "fcm-like")])
        finally:
            redis_client.disconnect(client)
    return rows


# ---------------------------------------------------------------------------------------------
# Tables (markdown)

def fleet_table(rows):
    lines = ["| workers | devices | notif/s | vs 1 worker | sent per worker | worker CPU µs/notif | peak RSS MB | "
             "broker µs/job (publish + drain) | conns APNs/AMQP/Redis per worker | lost | dup | AMQP reconnects | load before → max "
             "| others | run s |",
             "| ---: | ---: | ---: | ---: | --- | --- | --- | ---: | --- | ---: | ---: | ---: | --- | ---: | ---: |"]
    for r in rows:
        w = r["per_worker"]
        conns = ", ".join(f"{x['connections']['apns']}/{x['connections']['amqp']}/{x['connections']['redis']}" for x in w)
        sent = " / ".join(f"{x['sent']:,}" for x in w)
        cpu = " / ".join(f"{x['cpu_us_per_notification']:.1f}" for x in w)
        rss = " / ".join(f"{x['peak_rss_kb'] / 1024:.0f}" for x in w)
        lines.append(
            f"| {r['workers']} | {r['accepted']:,} | {r['rate']:,.0f} | {r.get('rate_vs_1_worker', 1.0):.2f} "
            f"| {sent} | {cpu} | {rss} "
            f"| {r['broker_cpu_us_per_job_publish']:.0f} + {r['broker_cpu_us_per_job_drain']:.0f} = {r['broker_cpu_us_per_job']:.0f} "
            f"| {conns} | {r['lost']} | {r['duplicates']} | {r['amqp_reconnects']} "
            f"| {r['load_before'][0]:.2f} → {r['load_1min_max_during']:.2f} "
            f"| {r['others_share']:.0%} | {r['run_wall_seconds']:.0f} |")
    return "\n".join(lines)


def matrix_table(rows):
    lines = ["| queue type | completion events | jobs | notif/s | worker CPU µs/notif | broker µs/job publish "
             "| broker µs/job drain | broker µs/job total | publish jobs/s | lost | dup | AMQP reconnects | load before → max "
             "| others | run s |",
             "| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- | ---: | ---: |"]
    for r in rows:
        lines.append(
            f"| {r['queue_type']} | {r['completion_events']} | {r['jobs']:,} | {r['rate']:,.0f} "
            f"| {r['per_worker'][0]['cpu_us_per_notification']:.1f} | {r['broker_cpu_us_per_job_publish']:.0f} "
            f"| {r['broker_cpu_us_per_job_drain']:.0f} | {r['broker_cpu_us_per_job']:.0f} | {r['publish_jobs_per_second']:,.0f} "
            f"| {r['lost']} | {r['duplicates']} | {r['amqp_reconnects']} "
            f"| {r['load_before'][0]:.2f} → {r['load_1min_max_during']:.2f} "
            f"| {r['others_share']:.0%} | {r['run_wall_seconds']:.0f} |")
    return "\n".join(lines)


def redis_table(rows):
    lines = ["| tokens | chars each | encoding | MEMORY USAGE | bytes per token | used_memory delta |",
             "| ---: | ---: | --- | ---: | ---: | ---: |"]
    for r in rows:
        lines.append(f"| {r['members']:,} {r['kind']} | {r['token_chars']} | {r['encoding']} "
                     f"| {r['memory_usage_bytes'] / 2**20:.1f} MiB | {r['bytes_per_token']:.0f} "
                     f"| {r['used_memory_delta_bytes'] / 2**20:.1f} MiB |")
    return "\n".join(lines)


def copy_binary(binary, tmp):
    """The binary copied into the run's folder: every worker of the run execs the same file, even
    if the build tree is rebuilt meanwhile."""
    target = os.path.join(tmp, "pushworker")
    shutil.copy2(binary, target)
    return target


def binary_identity(source, copy):
    """Where the binary came from, and the copy's size, modification time and SHA-256 (which build ran)."""
    import hashlib
    digest = hashlib.sha256()
    with open(copy, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    stat = os.stat(copy)
    return {"source": source, "bytes": stat.st_size, "mtime": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(stat.st_mtime)),
            "sha256": digest.hexdigest()}
