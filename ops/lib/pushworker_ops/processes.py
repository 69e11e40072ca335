"""Child processes (workers, the sandbox, h2load, perf) and what /proc tells about them."""
import os
import signal
import socket
import subprocess
import time
from typing import NamedTuple

from .errors import OpsError
from .log import log

CLK_TCK = os.sysconf("SC_CLK_TCK")

_children = {}          # pid -> (name, Popen): what stop_all() ends on the way out


class Ended(NamedTuple):
    code: int           # exit status; -N after signal N
    rusage: object      # wait4's resource usage; None when Popen had reaped it already
    seconds: float      # from the signal to the exit
    killed: bool        # it outlasted the timeout and got SIGKILL


def port_open(port):
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=1):
            return True
    except OSError:
        return False


def clean_env(extra=None):
    """Our environment without PUSHWORKER_*: a worker's or sandbox's options come from its command
    line, never from what the caller's shell happens to export."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("PUSHWORKER_")}
    env.update(extra or {})
    return env


def spawn(name, argv, log_path, env=None, new_session=True):
    """Starts argv with stdout and stderr appended to log_path. In a session of its own a
    terminal's Ctrl-C does not reach it; the caller ends it."""
    with open(log_path, "ab") as out:
        process = subprocess.Popen(argv, stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, env=env,
                                   start_new_session=new_session)
    _children[process.pid] = (name, process)
    return process


def reap(process, timeout, name, on_poll=None):
    """wait4 for the child within timeout seconds: (exit status, rusage); raises OpsError when it
    still runs. on_poll() is called on every look (to sample the child while it lives)."""
    deadline = time.monotonic() + timeout
    while True:
        if on_poll:
            on_poll()
        if process.returncode is not None:
            _children.pop(process.pid, None)
            return process.returncode, None
        pid, status, rusage = os.wait4(process.pid, os.WNOHANG)
        if pid == process.pid:
            process.returncode = os.waitstatus_to_exitcode(status)
            _children.pop(process.pid, None)
            return process.returncode, rusage
        if time.monotonic() > deadline:
            raise OpsError(f"{name} (pid {process.pid}) did not exit within {timeout:.0f}s")
        time.sleep(0.02)


def stop(process, name, timeout=30, signum=signal.SIGTERM, on_poll=None):
    """signum (SIGTERM), a wait of at most timeout seconds, then SIGKILL."""
    if process.returncode is not None:
        return Ended(process.returncode, None, 0.0, False)
    started = time.monotonic()
    try:
        os.kill(process.pid, signum)
    except ProcessLookupError:
        pass
    try:
        code, rusage = reap(process, timeout, name, on_poll)
        return Ended(code, rusage, time.monotonic() - started, False)
    except OpsError:
        log(f"{name} (pid {process.pid}) ignored SIGTERM for {timeout}s; killing it")
        try:
            os.kill(process.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        code, rusage = reap(process, 10, name)
        return Ended(code, rusage, time.monotonic() - started, True)


def stop_all(timeout=20):
    """Ends every child of spawn() that still runs."""
    for pid, (name, process) in list(_children.items()):
        try:
            stop(process, name, timeout)
        except Exception as error:  # noqa: BLE001 - best effort on the way out
            log(f"could not stop {name} (pid {pid}): {error}")


def proc_status(pid, field):
    """A number from /proc/PID/status (VmRSS and VmHWM in kB, Threads), None once it has exited."""
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith(field + ":"):
                    return int(line.split()[1])
    except OSError:
        pass
    return None


def proc_cpu_seconds(pid):
    """User + system CPU seconds of a running process."""
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / CLK_TCK   # utime, stime (fields 14, 15)


def process_name(pid):
    """/proc/PID/comm, "" once it has exited."""
    try:
        with open(f"/proc/{pid}/comm") as f:
            return f.read().strip()
    except OSError:
        return ""


def log_tail(path, lines=30):
    try:
        with open(path, "rb") as f:
            return b"\n".join(f.read().splitlines()[-lines:]).decode(errors="replace")
    except OSError:
        return ""
