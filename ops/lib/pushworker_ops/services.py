"""RabbitMQ and Redis as ops/services.sh runs them: one folder of state and pid files per pair of
ports, so that several suites can run side by side."""
import os
import signal
import subprocess
import time
from pathlib import Path

from .errors import OpsError
from .processes import port_open, process_name

SCRIPT = Path(__file__).resolve().parents[2] / "services.sh"
RABBITMQCTL = "/usr/lib/rabbitmq/bin/rabbitmqctl"


class Services:
    def __init__(self, directory, amqp_port, redis_port, log_path=None):
        self.directory = Path(directory)
        self.amqp_port, self.redis_port = amqp_port, redis_port
        self.log_path = log_path
        # One pid file per port, as ops/services.sh writes them.
        self.redis_pid_file = self.directory / f"redis/redis-{redis_port}.pid"
        self.rabbitmq_pid_file = self.directory / f"rabbitmq/rabbitmq-{amqp_port}.pid"

    @property
    def node(self):
        """The broker's Erlang node, named by its port as ops/services.sh names it."""
        return "pushworker@localhost" if self.amqp_port == 5672 else f"pushworker-{self.amqp_port}@localhost"

    def run(self, command, timeout=180, check=True):
        """ops/services.sh start | stop | restart-rabbitmq | …; its output is appended to log_path,
        or, without one, told in the error when it fails."""
        env = dict(os.environ, PUSHWORKER_SERVICES_DIR=str(self.directory), AMQP_PORT=str(self.amqp_port),
                   REDIS_PORT=str(self.redis_port))
        if self.log_path:
            with open(self.log_path, "a") as out:
                result = subprocess.run([str(SCRIPT), command], env=env, stdout=out, stderr=subprocess.STDOUT,
                                        timeout=timeout)
            details = f"; see {self.log_path}"
        else:
            result = subprocess.run([str(SCRIPT), command], env=env, capture_output=True, text=True, timeout=timeout)
            details = f":\n{result.stdout}{result.stderr}"
        if check and result.returncode != 0:
            raise OpsError(f"ops/services.sh {command} failed{details}")
        return result

    def rabbitmqctl(self, *args, timeout=30):
        """rabbitmqctl's output for this node (its Erlang cookie is in the folder), None if it failed."""
        env = dict(os.environ, HOME=str(self.directory / "rabbitmq"))
        try:
            result = subprocess.run([RABBITMQCTL, "-q", "-n", self.node, *args], env=env, capture_output=True,
                                    text=True, timeout=timeout)
        except subprocess.TimeoutExpired:
            return None
        return result.stdout if result.returncode == 0 else None

    def stop_redis(self):
        """Stops the Redis of the pid file (an outage, or the end of a run that started only Redis)
        and waits, 10 s at most, until its port is closed; the pid file goes."""
        pid = int(self.redis_pid_file.read_text().strip())
        os.kill(pid, signal.SIGTERM)
        for _ in range(100):
            if not port_open(self.redis_port):
                break
            time.sleep(0.1)
        self.redis_pid_file.unlink(missing_ok=True)

    def redis_pid(self):
        """The pid of our redis-server, None if it cannot be told."""
        pids = _candidates(self.redis_pid_file, "redis-server")
        return pids[0] if len(pids) == 1 else None

    def rabbitmq_pid(self):
        """The pid of our broker's beam.smp."""
        pids = _candidates(self.rabbitmq_pid_file, "beam")
        if len(pids) == 1:
            return pids[0]
        raise OpsError(f"cannot tell which beam.smp is RabbitMQ on :{self.amqp_port} (found {pids or 'none'})")


def _candidates(pid_file, name_prefix):
    """[the pid file's pid] while that process runs under a name starting with name_prefix; without
    one, every running process of that name (a service this folder did not start)."""
    try:
        pid = int(pid_file.read_text().strip())
        if process_name(pid).startswith(name_prefix):
            return [pid]
    except (OSError, ValueError):
        pass
    return [int(e) for e in os.listdir("/proc") if e.isdigit() and process_name(e).startswith(name_prefix)]
