"""The fault suite's harness, shared by ops/faults, ops/soak and ops/kill-loop: its services on
ports of its own, one sandbox, workers, and per fault a job set, its queues, the wait until
everything settled and the verdict on every device."""
import fcntl
import json
import os
import random
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

from . import redis_client
from .broker import Broker, amqp_url, unacknowledged
from .errors import OpsError
from .job_set import JobSet
from .log import debug, log
from .processes import clean_env, port_open, proc_status, spawn, stop
from .sandbox import Sandbox
from .services import Services

ROOT = Path(__file__).resolve().parents[3]
# Read at import: ops/soak and ops/kill-loop set their own defaults before importing this.
DIR = Path(os.environ.get("FAULTS_DIR", "/tmp/pushworker-faults"))
AMQP_PORT = int(os.environ.get("FAULTS_AMQP_PORT", "5673"))
REDIS_PORT = int(os.environ.get("FAULTS_REDIS_PORT", "6380"))
CHUNK = 100
PREFETCH = 10
BULK_PREFETCH = 10      # the worker's bulk lane (fan-out chunks) holds this many jobs besides --prefetch
RETRY_DELAYS = "200ms,500ms,1s,2s"
RETRY_QUEUE_SUFFIXES = ["200ms", "500ms", "1s", "2s"]
SHUTDOWN_TIMEOUT = 10
PERMANENT_REASON = "BadMessageId"       # a 400 the worker treats as permanent: delivery.failed at once
BASE_RULES = [
    {"tokenPrefix": "dead", "status": 410, "reason": "Unregistered"},
    {"tokenPrefix": "fa11", "status": 400, "reason": PERMANENT_REASON},
]


@dataclass(frozen=True)
class Limits:
    request_timeout: int            # the workers' --apns-request-timeout, seconds
    duplicate_tolerance: float      # duplicates allowed, as a multiple of the in-flight bound
    # Seconds from a fault's end to the first notification APNs accepted after it ("resume s"):
    # the worker must be sending again this soon.
    resume_limit: float


FULL_RUN = Limits(request_timeout=3, duplicate_tolerance=1.0, resume_limit=5.0)
# The quick (CI) run, under a sanitizer on 2 cores. It has no stall fault, and on a loaded machine a
# short request timeout only adds retries of answers that were merely slow, i.e. duplicates that no
# crash caused: kill9 measured 2,948 (ASan) and 3,391 (TSan) against its bound of 3,000.
QUICK_RUN = Limits(request_timeout=10, duplicate_tolerance=1.5, resume_limit=15.0)


class Worker:
    count = 0

    def __init__(self, suite, fault, shutdown_timeout=SHUTDOWN_TIMEOUT, prefetch=PREFETCH, request_timeout=None, config=None, env=None,
                 extra_args=()):
        """config: a configuration file whose apps it serves (instead of the sandbox's APNs app from
        flags); env: variables it needs besides the clean environment (a VAPID key); extra_args: more
        `pushworker run` options."""
        Worker.count += 1
        self.suite, self.fault = suite, fault
        self.name = f"{fault.name}-w{Worker.count}"
        self.expected_exit = False
        self.exit_seconds = None
        sandbox = suite.sandbox
        apps = ["--config", str(config)] if config else [
            "--apns-url", f"https://127.0.0.1:{sandbox.port}", "--apns-ca-file", sandbox.ca,
            "--apns-key-file", sandbox.key, "--apns-key-id", "SANDBOXKEY", "--apns-team-id", "SANDBOXTM1",
            "--apns-topic", "com.example.app", "--apns-request-timeout", str(request_timeout or suite.limits.request_timeout)]
        args = [suite.binary, "run", "--amqp-url", amqp_url(AMQP_PORT), "--redis-url", f"redis://127.0.0.1:{REDIS_PORT}/0",
                *apps, "--retry-delays", RETRY_DELAYS, "--chunk-size", str(CHUNK),
                "--prefetch", str(prefetch), "--shutdown-timeout", str(shutdown_timeout),
                "--job-queue", fault.job_queue, "--results-exchange", fault.exchange, "--log-level", "info", *extra_args]
        self.log_path = suite.run_dir / f"{self.name}.log"
        self.process = spawn(self.name, args, self.log_path, env={**clean_env(), **(env or {})}, new_session=False)
        self.started = time.time()
        fault.workers.append(self)
        debug(f"started {self.name} (pid {self.process.pid})")

    def alive(self):
        return self.process.poll() is None

    def peak_rss_mb(self):
        """VmHWM (peak resident set) of the running worker in MB, None once it has exited."""
        kb = proc_status(self.process.pid, "VmHWM")
        return None if kb is None else kb / 1024

    def log_count(self, text):
        try:
            return self.log_path.read_text(errors="replace").count(text)
        except OSError:
            return 0

    def kill9(self):
        self.expected_exit = True
        self.process.kill()
        self.process.wait()
        debug(f"killed {self.name} with SIGKILL")

    def terminate(self, limit):
        """SIGTERM; returns (exit status, seconds until exit); kills it after `limit` + 5 s (status None)."""
        self.expected_exit = True
        if not self.alive():
            return self.process.returncode, 0.0
        ended = stop(self.process, self.name, timeout=limit + 5)
        if ended.killed:
            return None, ended.seconds
        self.exit_seconds = ended.seconds
        return ended.code, ended.seconds

    def crashed(self):
        """A worker that ended without being asked to."""
        return not self.expected_exit and self.process.poll() is not None


class Fault:
    def __init__(self, suite, name, index):
        self.suite, self.name, self.index = suite, name, index
        self.job_queue = f"faults.{name}.jobs"
        self.dead_queue = self.job_queue + ".dead"
        # The delay queues, and the bulk lane (fan-out chunks) with its own delay queues: work
        # waits in all of them, so a fault is settled only once they are empty.
        bulk = self.job_queue + ".bulk"
        self.retry_queues = [f"{self.job_queue}.retry.{s}" for s in RETRY_QUEUE_SUFFIXES] + [bulk] + \
            [f"{bulk}.retry.{s}" for s in RETRY_QUEUE_SUFFIXES]
        self.exchange = f"faults.{name}.results"
        self.unrouted = self.exchange + ".unrouted"      # a newer worker's alternate exchange and its queue
        self.events_queue = f"faults.{name}.events"
        self.jobs = JobSet(f"{name}-{suite.nonce:x}", index, suite.nonce)
        self.workers = []
        self.events = []
        self.problems = []
        self.notes = []
        self.disruptions = 0        # crashes, broker restarts, connection resets: each may repeat what was in flight
        self.fault_end = None
        self.started = time.time()
        self.settled_at = None
        self.row = None
        self.accepted_at_fault_end = None
        self.work_after_fault = True       # the fault must leave work for after it, or it tested nothing
        self.extra_queues = []             # queues the fault declared itself (deleted by cleanup)
        # A sandbox restart empties its record and counters: what it recorded before is kept here.
        self.received_before = []
        self.accepted_before = 0

    # -- set-up and tear-down
    def prepare(self):
        broker = self.suite.broker
        broker.delete(queues=[self.job_queue, self.dead_queue, self.events_queue, self.unrouted] + self.retry_queues,
                      exchanges=[self.exchange, self.unrouted])
        # Bound to the results exchange once the first worker declared it (worker()).
        if not broker.call(lambda ch: ch.queue_declare(self.events_queue, durable=True), attempts=5):
            raise OpsError("could not declare the events queue")
        self.suite.sandbox.reset(rules=BASE_RULES, faults={})

    def load_groups(self):
        for key, members in self.jobs.groups.items():
            redis_client.replace_set(self.suite.redis, key, members)

    def worker(self, **options):
        """Starts a worker and waits until it declared its queues and the results exchange, to
        which the events queue is then bound (again: it is idempotent)."""
        worker = Worker(self.suite, self, **options)
        broker = self.suite.broker
        deadline = time.time() + 60
        while time.time() < deadline:
            if all(broker.exists(q) for q in [self.job_queue] + self.retry_queues) and broker.exchange_exists(self.exchange):
                broker.bind_events(self.exchange, self.events_queue)
                return worker
            if not worker.alive():
                break
            time.sleep(0.2)
        self.problems.append(f"{worker.name} did not declare its queues and {self.exchange} (see {worker.log_path})")
        return worker

    def publish(self, messages=None):
        messages = self.jobs.jobs if messages is None else messages
        self.suite.broker.publish(self.job_queue, messages)
        debug(f"{self.name}: published {len(messages)} jobs")

    def cleanup(self):
        for worker in self.workers:
            if worker.alive():
                worker.terminate(SHUTDOWN_TIMEOUT)
        self.suite.broker.delete(queues=[self.job_queue, self.dead_queue, self.events_queue, self.unrouted] + self.retry_queues
                                 + self.extra_queues, exchanges=[self.exchange, self.unrouted])
        try:
            keys = list(self.jobs.groups)
            if keys:
                self.suite.redis.delete(*keys)
        except redis_client.Error:
            pass

    def held_back(self, every=3):
        """Splits the jobs: every `every`-th token-only job is held back, to be published once the
        fault is over. Work after the fault then exists by construction, whatever the machine's
        speed; waiting for a share of the work instead failed CI when the work outran the check.
        Returns (first, later, devices in first)."""
        later = [job for i, job in enumerate(self.jobs.jobs) if i % every == 1 and b'"groups"' not in job[1]]
        first = [job for job in self.jobs.jobs if job not in later]
        later_devices = sum(len(json.loads(body)["tokens"]) for _, body, *_ in later)
        return first, later, len(self.jobs.expected) - later_devices

    def mark_fault_end(self):
        self.fault_end = time.time()
        self.accepted_at_fault_end = self.accepted()

    # -- observation
    def drain_events(self):
        for routing_key, body, _ in self.suite.broker.drain(self.events_queue):
            try:
                event = json.loads(body)
            except ValueError:
                self.problems.append(f"an event that is not JSON on {routing_key}: {body[:80]!r}")
                continue
            event["_key"] = routing_key
            self.events.append(event)

    def accepted(self):
        try:
            return self.accepted_before + self.suite.sandbox.stats()["accepted"]
        except RuntimeError:
            return self.accepted_before

    def received(self):
        """The sandbox's record, including what it recorded before a restart."""
        return self.received_before + self.suite.sandbox.received()

    def log_count(self, text):
        """How often the fault's workers logged `text`."""
        return sum(worker.log_count(text) for worker in self.workers)

    def wait_accepted(self, count, timeout=90):
        deadline = time.time() + timeout
        while time.time() < deadline:
            if self.accepted() >= count:
                return True
            self.check_workers()
            time.sleep(0.1)
        self.notes.append(f"progress {count} not reached within {timeout}s")
        return False

    def check_workers(self):
        for worker in self.workers:
            if worker.crashed() and not getattr(worker, "reported", False):
                worker.reported = True
                self.problems.append(f"worker {worker.name} exited by itself with status {worker.process.returncode} (see {worker.log_path})")

    def settle(self, timeout=150, quiet=2.0, abort=None):
        """Waits until the job and delay queues are empty, nothing is unacked and no requests or events
        arrived for `quiet` seconds. Returns whether it settled within `timeout`. `abort()` is asked
        after every look at the events: a text ends the wait early as a problem (a loop that would
        never settle)."""
        queues = [self.job_queue] + self.retry_queues
        deadline = time.time() + timeout
        last, quiet_since = None, time.time()
        while time.time() < deadline:
            self.drain_events()
            self.check_workers()
            reason = abort() if abort else None
            if reason:
                self.problems.append(reason)
                self.settled_at = time.time()
                return False
            ready = self.suite.broker.ready(queues)
            try:
                requests = self.suite.sandbox.stats()["requests"]
            except RuntimeError:
                requests = None
            signature = (requests, len(self.events), tuple(sorted(ready.items())) if ready else None)
            if signature != last:
                last, quiet_since = signature, time.time()
            elif ready is not None and sum(ready.values()) == 0 and time.time() - quiet_since >= quiet:
                if unacknowledged(self.suite.services, queues + [self.dead_queue]) == 0:
                    self.drain_events()
                    self.settled_at = quiet_since
                    return True
                quiet_since = time.time()        # someone still holds a job: keep waiting
            time.sleep(0.3)
        self.problems.append(f"did not settle within {timeout}s (ready: {ready})")
        self.settled_at = time.time()
        return False

    # -- verdict
    def evaluate(self, expected=None):
        expected = self.jobs.expected if expected is None else expected
        received = self.received()
        accepted, invalid_events, failed_events = {}, {}, {}
        for item in received:
            if item.get("status") == 200:
                accepted[item["token"]] = accepted.get(item["token"], 0) + 1
        for event in self.events:
            key = event["_key"]
            if key == "token.invalid":
                invalid_events[event["token"]] = invalid_events.get(event["token"], 0) + 1
            elif key == "delivery.failed":
                failed_events[event["token"]] = failed_events.get(event["token"], 0) + 1
        lost, wrong, dups = [], [], []
        most, most_token = 0, None
        counts = {"delivered": 0, "invalid": 0, "failed": 0}
        for token, want in expected.items():
            outcomes = {name for name, table in (("delivered", accepted), ("invalid", invalid_events), ("failed", failed_events))
                        if table.get(token)}
            records = accepted.get(token, 0) + invalid_events.get(token, 0) + failed_events.get(token, 0)
            if not outcomes:
                lost.append(token)
                continue
            if outcomes != {want}:
                wrong.append((token, want, sorted(outcomes)))
            for name in outcomes:
                counts[name] += 1
            if records > 1:
                dups.append(token)
            if records > most:
                most, most_token = records, token
        mine = f"{self.index:02x}00{self.suite.nonce:08x}"
        stray = [t for t in accepted if t[4:18] == mine and t not in expected]
        bound = self.disruptions * (PREFETCH + BULK_PREFETCH) * CHUNK
        # Each disruption can repeat every device in flight, which the faults keep at the maximum,
        # so the bound is tight; on a loaded CI machine a slow answer retried after the request
        # timeout adds a few more. The quick (CI) run allows 50% over; the full run checks exactly.
        allowed = int(bound * self.suite.limits.duplicate_tolerance)
        if lost:
            self.problems.append(f"{len(lost)} devices lost, e.g. {lost[:3]}")
        if wrong:
            self.problems.append(f"{len(wrong)} devices with the wrong outcome, e.g. {wrong[:3]}")
        if stray:
            self.problems.append(f"{len(stray)} devices delivered that no job named, e.g. {stray[:2]}")
        if len(dups) > allowed:
            self.problems.append(f"{len(dups)} duplicates exceed the in-flight bound {bound} "
                                 f"({self.disruptions} disruptions x (prefetch {PREFETCH} + bulk lane {BULK_PREFETCH}) x chunk {CHUNK})")
        # No storm: each disruption can repeat a device once (it was in flight); in the quick run a
        # slow answer retried after the request timeout may add one more. Anything above is a loop.
        most_allowed = 1 + self.disruptions + (1 if self.suite.limits.duplicate_tolerance > 1 else 0)
        if most > most_allowed:
            self.problems.append(f"a device got {most} outcomes (accepted or events), e.g. {most_token}; "
                                 f"at most {most_allowed} with {self.disruptions} disruptions")
        self.check_workers()
        # Resuming: the first acceptance after the fault's end, by the sandbox's clock (same machine).
        resume = None
        if self.fault_end is not None:
            after = [item["at_ms"] / 1000 for item in received
                     if item.get("status") == 200 and item.get("at_ms", 0) / 1000 >= self.fault_end]
            if after:
                resume = max(0.0, min(after) - self.fault_end)
        resume_limit = self.suite.limits.resume_limit
        if resume is not None and resume > resume_limit:
            self.problems.append(f"the first notification after the fault was accepted {resume:.1f}s after it ended (limit {resume_limit:.0f}s)")
        if self.work_after_fault and self.accepted_at_fault_end is not None and sum(accepted.values()) <= self.accepted_at_fault_end:
            self.problems.append("no device was accepted after the fault ended, so the recovery was not observed")
        end = self.settled_at or time.time()
        self.row = {
            "fault": self.name, "jobs": len(self.jobs.jobs), "devices": len(expected),
            "delivered": counts["delivered"], "invalid": counts["invalid"], "failed": counts["failed"],
            "dups": len(dups), "bound": bound, "most": most, "lost": len(lost), "wrong": len(wrong),
            "recover": max(0.0, end - (self.fault_end or self.started)), "total": end - self.started, "resume": resume,
        }
        return accepted


class Suite:
    def __init__(self, args):
        self.args = args
        self.limits = QUICK_RUN if args.quick else FULL_RUN
        self.nonce = random.getrandbits(32)
        self.run_dir = DIR / f"run-{time.strftime('%Y%m%d-%H%M%S')}-{os.getpid()}"
        self.run_dir.mkdir(parents=True, exist_ok=True)
        self.services = Services(DIR, AMQP_PORT, REDIS_PORT, log_path=DIR / "services.log")
        self.broker = Broker(AMQP_PORT)
        self.redis = redis_client.connect(REDIS_PORT)
        self.sandbox = None
        self.started_services = False

    def binary_path(self):
        given = self.args.binary or os.environ.get("FAULTS_BINARY")
        if given:
            binary = Path(given).resolve()
            if not (binary.is_file() and os.access(binary, os.X_OK)):
                sys.exit(f"ops/faults: --binary/FAULTS_BINARY {given} is not an executable file")
            return str(binary)
        out = subprocess.run(["swift", "build", "--show-bin-path"], cwd=ROOT, capture_output=True, text=True, check=True)
        binary = Path(out.stdout.strip()) / "pushworker"
        if self.args.build or not binary.exists():
            log("building pushworker (swift build waits if another build holds the lock)")
            subprocess.run(["swift", "build", "--product", "pushworker"], cwd=ROOT, check=True)
        return str(binary)

    def setup(self):
        if AMQP_PORT in (5672,) or REDIS_PORT in (6379,):
            sys.exit("ops/faults: refusing to use the shared ports 5672/6379")
        DIR.mkdir(parents=True, exist_ok=True)
        self.binary = self.binary_path()
        self.started_services = not (port_open(AMQP_PORT) and port_open(REDIS_PORT))
        log(f"binary: {self.binary}")
        log(f"services: RabbitMQ 127.0.0.1:{AMQP_PORT}, Redis 127.0.0.1:{REDIS_PORT} (under {DIR})")
        self.services.run("start")
        self.redis.flushall()        # our own instance: leftovers of earlier runs go
        self.sandbox = Sandbox(self.binary, self.run_dir / "sandbox", self.run_dir / "sandbox.log", env=clean_env(),
                               new_session=False)
        self.sandbox.start()
        log(f"sandbox: https://127.0.0.1:{self.sandbox.port}; logs in {self.run_dir}")

    def teardown(self):
        if self.sandbox:
            self.sandbox.stop()
        self.broker.drop()
        redis_client.disconnect(self.redis)
        if self.started_services and not self.args.keep_services:
            self.services.run("stop")

    def run(self, catalogue, names, scale):
        """Runs the named faults of catalogue (name: (function, in quick run, description))."""
        faults = []
        for index, name in enumerate(names, start=1):
            function, _, description = catalogue[name]
            log(f"{name}: {description}")
            fault = Fault(self, name, index)
            faults.append(fault)
            try:
                fault.prepare()
                function(fault, scale)
            except Exception as error:       # a broken run is a failed fault, not a crashed suite
                fault.problems.append(f"the suite failed: {error!r}")
                if fault.row is None:
                    try:
                        fault.evaluate()
                    except Exception:
                        pass
            finally:
                for worker in fault.workers:
                    if worker.alive():
                        status, seconds = worker.terminate(SHUTDOWN_TIMEOUT)
                        if status != 0:
                            fault.problems.append(f"{worker.name}: exit status {status} after SIGTERM ({seconds:.1f}s); see {worker.log_path}")
                fault.check_workers()
                fault.cleanup()
            if not self.sandbox.alive():
                fault.problems.append("the sandbox died")
                self.sandbox.start()
            row = fault.row
            if row:
                log(f"  {name}: {row['devices']} devices, {row['delivered']} delivered, {row['dups']} dups, "
                    f"{row['lost']} lost, {row['total']:.1f}s" + ("" if not fault.problems else "  FAILED"))
            for note in fault.notes:
                log(f"  {name}: {note}")
            for problem in fault.problems:
                log(f"  {name}: PROBLEM: {problem}")
        return faults


def exclusive_run(timeout=1800):
    """One run at a time per pair of ports: two runs on one broker delete each other's queues and
    exchanges (the fault names are the same) and stop each other's services. A second run waits,
    bounded, for the first to end (the lock goes with the process, however it ends)."""
    path = Path(f"/tmp/pushworker-faults-{AMQP_PORT}-{REDIS_PORT}.lock")
    lock = open(path, "a")
    deadline = time.time() + timeout
    waiting = False
    while True:
        try:
            fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return lock
        except BlockingIOError:
            if not waiting:
                log(f"another ops/faults run uses ports {AMQP_PORT}/{REDIS_PORT} ({path}); waiting for it to end")
                waiting = True
            if time.time() > deadline:
                sys.exit(f"ops/faults: another run held {path} for {timeout}s")
            time.sleep(1)

