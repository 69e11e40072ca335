"""`pushworker config check` of the configuration files the deployment ships (compose's, the
Kubernetes ConfigMap's). Their key files exist only where they are deployed, so each file they name
is given a stand-in made here with openssl (an EC P-256 .p8 key, a self-signed certificate, a
service-account JSON with an RSA key) and the path rewritten to it; the rest of the file is
checked as written: unknown keys, types, values, the keys loaded as the worker loads them."""
import json
import os
import subprocess
import tempfile
from pathlib import Path

import yaml

from .kube import named_files


def openssl(*args):
    subprocess.run(["openssl", *args], check=True, capture_output=True)


def stand_in(path, folder):
    """A file of the kind path names, in folder."""
    target = Path(folder) / Path(path).name
    if target.exists():
        return target
    name = Path(path).name
    if name.endswith(".p8"):
        openssl("genpkey", "-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:P-256", "-out", str(target))
    elif name.endswith(".json"):
        key = Path(folder) / (name + ".key")
        openssl("genpkey", "-algorithm", "RSA", "-pkeyopt", "rsa_keygen_bits:2048", "-out", str(key))
        target.write_text(json.dumps({
            "type": "service_account", "project_id": "deploy-check", "private_key_id": "0" * 40,
            "private_key": key.read_text(), "client_email": "deploy-check@deploy-check.iam.gserviceaccount.com",
            "client_id": "1", "token_uri": "https://oauth2.googleapis.com/token"}))
    elif name.endswith(".pem") or name.endswith(".crt"):
        key = Path(folder) / (name + ".key")
        openssl("req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes", "-days", "30",
                "-subj", "/CN=deploy-check", "-keyout", str(key), "-out", str(target))
    else:
        raise RuntimeError(f"no stand-in for {path}")
    return target


def check(binary, configs):
    """configs: [(label, text)]. Returns (problems, notes)."""
    problems, notes = [], []
    with tempfile.TemporaryDirectory(prefix="pushworker-config-check-") as folder:
        for label, text in configs:
            config = yaml.safe_load(text)
            rewritten = text
            for path in sorted(set(named_files(config)), key=len, reverse=True):
                rewritten = rewritten.replace(path, str(stand_in(path, folder)))
            file = Path(folder) / (label.replace("/", "_") + ".yaml")
            file.write_text(rewritten)
            env = {k: v for k, v in os.environ.items() if not k.startswith("PUSHWORKER_")}
            done = subprocess.run([binary, "config", "check", str(file)], env=env, capture_output=True, text=True)
            if done.returncode != 0:
                errors = [line for line in (done.stdout + done.stderr).splitlines() if str(file) in line] or \
                    (done.stdout + done.stderr).strip().splitlines()[-5:]
                problems.append(f"{label}: pushworker config check exit {done.returncode}: " + "; ".join(errors))
            else:
                apps = ", ".join(f"{a.get('name')} ({a.get('platform')})" for a in config.get("apps", []))
                notes.append(f"{label}: pushworker config check: valid; apps {apps}; "
                             f"{len(set(named_files(config)))} key files given stand-ins")
    return problems, notes
