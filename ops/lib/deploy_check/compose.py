"""Checks of ops/deploy/compose.yaml: `docker compose config` (the Compose v2 plugin from
ops/deploy-tools.sh; it needs no engine) and what the deployment relies on in it."""
import os
import re
import subprocess
from pathlib import Path

import yaml

from .systemd import seconds


def check(path, docker_config):
    problems, notes = [], []
    env = {**os.environ, "DOCKER_CONFIG": str(docker_config)}
    version = subprocess.run(["docker", "compose", "version", "--short"], env=env, capture_output=True, text=True)
    if version.returncode != 0:
        return [f"docker compose is not available: {version.stderr.strip()}"], notes
    # Every profile, so that the optional services are validated too; -q: only the verdict.
    done = subprocess.run(["docker", "compose", "-f", str(path), "--profile", "*", "config", "-q"], env=env,
                          capture_output=True, text=True)
    if done.returncode != 0:
        return [f"docker compose config: exit {done.returncode}: {(done.stdout + done.stderr).strip()}"], notes
    services_out = subprocess.run(["docker", "compose", "-f", str(path), "--profile", "*", "config", "--services"],
                                  env=env, capture_output=True, text=True).stdout.split()
    notes.append(f"docker compose config (Compose {version.stdout.strip()}, every profile): valid; services "
                 f"{', '.join(sorted(services_out))}")

    compose = yaml.safe_load(Path(path).read_text())
    services = compose["services"]
    for name in ("rabbitmq", "redis", "sandbox", "worker"):
        if name not in services:
            problems.append(f"no {name} service")
    if problems:
        return problems, notes
    worker = services["worker"]
    replicas = str(worker.get("deploy", {}).get("replicas", ""))
    match = re.fullmatch(r"\$\{\w+:-(\d+)\}|(\d+)", replicas)
    if not match or int(match.group(1) or match.group(2)) < 2:
        problems.append(f"worker deploy.replicas {replicas!r}: expected 2 or more")
    config_path = worker.get("environment", {}).get("PUSHWORKER_CONFIG")
    mounts = [c for c in worker.get("configs", []) if c.get("target") == config_path]
    if config_path != "/etc/pushworker/pushworker.yaml" or not mounts:
        problems.append(f"worker: the configuration file is not mounted at PUSHWORKER_CONFIG ({config_path})")
        return problems, notes
    config_file = Path(path).parent / compose["configs"][mounts[0]["source"]]["file"]
    config = yaml.safe_load(config_file.read_text())
    shutdown = seconds(str(config.get("worker", {}).get("shutdown_timeout", "30s")))
    grace = seconds(str(worker.get("stop_grace_period", "10s")))
    if grace <= shutdown:
        problems.append(f"worker stop_grace_period {grace}s is not above shutdown_timeout {shutdown}s")
    if worker.get("stop_signal", "SIGTERM") != "SIGTERM":
        problems.append(f"worker stop_signal {worker.get('stop_signal')}")
    for dependency in ("rabbitmq", "redis", "sandbox"):
        if worker.get("depends_on", {}).get(dependency, {}).get("condition") != "service_healthy":
            problems.append(f"worker does not wait for {dependency} to be healthy")
    for variable in ("PUSHWORKER_AMQP_URL", "PUSHWORKER_REDIS_URL"):
        if "${" not in worker.get("environment", {}).get(variable, ""):
            problems.append(f"worker {variable} does not take its password from the environment")
    plugins = compose["configs"].get("rabbitmq-plugins", {}).get("content", "")
    if "rabbitmq_prometheus" not in plugins:
        problems.append("RabbitMQ without rabbitmq_prometheus: the dashboard's queue depths need it")
    sandbox = services["sandbox"]
    script = " ".join(sandbox.get("command", []))
    apps = config.get("apps", [])
    urls = {app.get("url") for app in apps}
    if "https://sandbox:2197" not in urls or "DNS:sandbox" not in script or "pushworker sandbox --host 0.0.0.0" not in script:
        problems.append("the workers do not reach the sandbox as https://sandbox:2197 with a certificate for DNS:sandbox")
    for name, service in services.items():
        for key in ("configs", "volumes"):
            for item in service.get(key, []):
                source = item.get("source") if isinstance(item, dict) else str(item).split(":")[0]
                if key == "volumes" and source not in compose.get("volumes", {}) and not source.startswith("."):
                    problems.append(f"{name}: volume {source} is not declared")
    for name, entry in compose.get("configs", {}).items():
        if "file" in entry and not (Path(path).parent / entry["file"]).is_file():
            problems.append(f"config {name}: {entry['file']} does not exist")
    notes.append(f"worker: {replicas} replicas, {config_path} from {config_file.name}, stop_grace_period {grace}s > "
                 f"shutdown_timeout {shutdown}s, waits for healthy rabbitmq, redis, sandbox")
    return problems, notes


def worker_config_file(path):
    """The file compose.yaml mounts as the workers' PUSHWORKER_CONFIG."""
    compose = yaml.safe_load(Path(path).read_text())
    worker = compose["services"]["worker"]
    target = worker["environment"]["PUSHWORKER_CONFIG"]
    source = next(c["source"] for c in worker["configs"] if c["target"] == target)
    return Path(path).parent / compose["configs"][source]["file"]
