"""ops/deploy-check's checks, one line each (PASS or FAIL, then what was checked or found)."""
import argparse
import os
import socket
import subprocess
import sys
import time
import urllib.parse
from pathlib import Path

from . import compose, configs, dashboard, dockerfile, kube, systemd

ROOT = Path(__file__).resolve().parents[3]
DEPLOY = ROOT / "ops" / "deploy"
TOOLS = ROOT / ".build" / "deploy-tools"


class Report:
    def __init__(self):
        self.passed = self.failed = 0

    def run(self, name, function, *args):
        started = time.monotonic()
        try:
            problems, notes = function(*args)
        except Exception as error:  # noqa: BLE001: a check that breaks is a failed check, with its reason
            problems, notes = [f"the check itself failed: {type(error).__name__}: {error}"], []
        took = time.monotonic() - started
        verdict = "FAIL" if problems else "PASS"
        print(f"{verdict} {name} ({took:.1f} s)", flush=True)
        for note in notes:
            print(f"     {note}", flush=True)
        for problem in problems:
            print(f"     ✗ {problem}", flush=True)
        if problems:
            self.failed += 1
        else:
            self.passed += 1


def port_answers(url, default_port):
    parts = urllib.parse.urlsplit(url.split(",")[0])
    try:
        with socket.create_connection((parts.hostname or "127.0.0.1", parts.port or default_port), timeout=1):
            return True
    except OSError:
        return False


def hadolint(path):
    done = subprocess.run([str(TOOLS / "bin" / "hadolint"), "--failure-threshold", "style", str(path)],
                          capture_output=True, text=True)
    output = (done.stdout + done.stderr).strip()
    if done.returncode != 0 or output:
        return [f"hadolint: {output or f'exit {done.returncode}'}"], []
    version = subprocess.run([str(TOOLS / "bin" / "hadolint"), "--version"], capture_output=True, text=True).stdout.strip()
    return [], [f"{version}: no finding at any level (the two DL3008 ignores are explained in the file)"]


def docs(path):
    problems, text = [], path.read_text() if path.exists() else ""
    if not text:
        return [f"{path} is missing"], []
    files = sorted(p.relative_to(ROOT) for p in DEPLOY.rglob("*") if p.is_file())
    for file in files:
        if str(file) not in text and file.name not in text:
            problems.append(f"{file} is not described")
    return problems, [f"docs/guides/deployment.md names all {len(files)} files under ops/deploy/"]


def runtime(binary):
    amqp = os.environ.get("AMQP_URL", "amqp://guest:guest@127.0.0.1:5672/")
    redis = os.environ.get("REDIS_URL", "redis://127.0.0.1:6379/0")
    started_services = False
    notes = []
    if not (port_answers(amqp, 5672) and port_answers(redis, 6379)):
        if "AMQP_URL" in os.environ or "REDIS_URL" in os.environ:
            return [f"RabbitMQ or Redis does not answer at {amqp} / {redis}"], []
        done = subprocess.run([str(ROOT / "ops" / "services.sh"), "start"], capture_output=True, text=True,
                              env={**os.environ, "PUSHWORKER_SERVICES_DIR": "/tmp/pushworker-deploy-check-services"})
        if done.returncode != 0:
            return [f"ops/services.sh start failed: {(done.stdout + done.stderr).strip()[-500:]}"], []
        started_services = True
        notes.append("RabbitMQ and Redis started with ops/services.sh for this check")
    try:
        done = subprocess.run([sys.executable, "-m", "deploy_check.runtime", "--binary", binary,
                               "--unit", str(DEPLOY / "pushworker.service"), "--dockerfile", str(DEPLOY / "Dockerfile"),
                               "--compose", str(DEPLOY / "compose.yaml")],
                              capture_output=True, text=True, timeout=120,
                              env={**os.environ, "PYTHONPATH": str(ROOT / "ops" / "lib")})
    finally:
        if started_services:
            subprocess.run([str(ROOT / "ops" / "services.sh"), "stop"], capture_output=True,
                           env={**os.environ, "PUSHWORKER_SERVICES_DIR": "/tmp/pushworker-deploy-check-services"})
    lines = [line.strip() for line in done.stdout.splitlines() if line.strip()]
    problems = [line.split("FAIL ", 1)[1] for line in lines if "runtime: FAIL" in line]
    notes += [line.split("runtime: ", 1)[-1] for line in lines if "runtime: FAIL" not in line]
    if done.returncode != 0 and not problems:
        problems.append(f"exit {done.returncode}: {done.stderr.strip()[-800:]}")
    return problems, notes


def main():
    parser = argparse.ArgumentParser(prog="ops/deploy-check")
    parser.add_argument("--binary", default=os.environ.get("PUSHWORKER_BINARY"))
    parser.add_argument("--static-only", action="store_true")
    args = parser.parse_args()
    binary = str(Path(args.binary).resolve())
    report = Report()
    print(f"binary: {binary}", flush=True)

    units = [DEPLOY / "pushworker.service", DEPLOY / "pushworker@.service"]
    report.run("systemd units: verify, security, settings, MemoryDenyWriteExecute", systemd.check, units, binary)
    report.run("Dockerfile: hadolint", hadolint, DEPLOY / "Dockerfile")
    report.run("Dockerfile: stages, runtime packages = ldd's libraries", dockerfile.check, DEPLOY / "Dockerfile", binary,
               ROOT / "ops" / "install-deps.sh", ROOT / "ops" / "build-release.sh")
    report.run("compose.yaml: docker compose config, structure", compose.check, DEPLOY / "compose.yaml", TOOLS / "docker")
    report.run("kubernetes/: schemas, references", kube.check, DEPLOY / "kubernetes", str(TOOLS / "bin" / "kubernetes-validate"))

    def config_files():
        return configs.check(binary, [
            ("compose/pushworker.yaml", compose.worker_config_file(DEPLOY / "compose.yaml").read_text()),
            ("the kubernetes ConfigMap's pushworker.yaml", kube.configmap_config(DEPLOY / "kubernetes")),
        ])
    report.run("configuration files: pushworker config check", config_files)
    report.run("grafana-dashboard.json: structure, PromQL, metric names", dashboard.check, DEPLOY / "grafana-dashboard.json")
    report.run("docs/guides/deployment.md: every file described", docs, ROOT / "docs" / "guides" / "deployment.md")
    if args.static_only:
        print("NOT RUN runtime: --static-only (no worker was started under the unit's sandbox)", flush=True)
    else:
        report.run("runtime: compose's sandbox + worker under the unit's seccomp filter, one notification", runtime, binary)
    print(f"deploy-check: {report.passed} passed, {report.failed} failed", flush=True)
    return 1 if report.failed else 0


if __name__ == "__main__":
    sys.exit(main())
