"""Checks of ops/deploy/kubernetes/: every manifest against the Kubernetes API's schemas
(kubernetes-validate, offline, strict: unknown fields are errors) for the oldest and newest
versions checked, and the references between the manifests that no schema sees."""
import re
import subprocess
from pathlib import Path

import yaml

from .systemd import seconds

VERSIONS = ["1.28.0", "1.37.0"]
CRD_GROUPS = ("keda.sh/", "monitoring.coreos.com/")


def documents(folder):
    docs = []
    for path in sorted(Path(folder).rglob("*.yaml")):
        for doc in yaml.safe_load_all(path.read_text()):
            if doc:
                docs.append((path, doc))
    return docs


def validate(folder, tool):
    problems, notes, skipped = [], [], set()
    files = [str(p) for p in sorted(Path(folder).rglob("*.yaml"))]
    for version in VERSIONS:
        done = subprocess.run([tool, "--strict", "--kubernetes-version", version, *files], capture_output=True, text=True)
        passed = 0
        for line in (done.stdout + done.stderr).splitlines():
            if line.startswith("INFO") and " passed " in line:
                passed += 1
            elif line.startswith("WARN") and "Couldn't find schema for kind" in line:
                match = re.search(r"kind (\w+) with api version (\S+)", line)
                kind, api = match.group(1), match.group(2)
                if not api.startswith(CRD_GROUPS):
                    problems.append(f"{version}: no schema for {kind} {api}, which is not a known CRD")
                skipped.add(f"{kind} ({api})")
            elif line.strip():
                problems.append(f"{version}: {line.strip()}")
        if done.returncode != 0 and not problems:
            problems.append(f"kubernetes-validate {version}: exit {done.returncode}")
        notes.append(f"kubernetes-validate --strict, Kubernetes {version.rsplit('.', 1)[0]}: {passed} resources passed")
    if skipped:
        notes.append(f"no schema, so not validated by it (CRDs): {', '.join(sorted(skipped))}; checked below by reference")
    return problems, notes


def find(docs, kind, name=None):
    for path, doc in docs:
        if doc.get("kind") == kind and (name is None or doc["metadata"]["name"] == name):
            return doc
    return None


def matches(selector, labels):
    return bool(selector) and all(labels.get(k) == v for k, v in selector.items())


def named_files(node, key=""):
    """Every file a configuration names: values of `file` and `*_file` keys."""
    if isinstance(node, dict):
        return [p for k, v in node.items() for p in named_files(v, k)]
    if isinstance(node, list):
        return [p for v in node for p in named_files(v, key)]
    return [node] if isinstance(node, str) and (key == "file" or key.endswith("_file")) else []


def references(folder):
    problems, notes = [], []
    docs = documents(folder)
    namespaces = {doc["metadata"].get("namespace") for _, doc in docs if doc.get("kind") != "Namespace"}
    if len(namespaces) != 1:
        problems.append(f"resources in several namespaces: {namespaces}")
    deployment = find(docs, "Deployment", "pushworker")
    if not deployment:
        return ["no Deployment pushworker"], notes
    pod = deployment["spec"]["template"]
    labels = pod["metadata"]["labels"]
    if not matches(deployment["spec"]["selector"]["matchLabels"], labels):
        problems.append("the Deployment's selector does not match its pods")
    spec = pod["spec"]
    container = spec["containers"][0]
    args = container.get("args", [])
    for flag, value in (("--status-port", "8081"), ("--status-host", "0.0.0.0")):
        if flag not in args or args[args.index(flag) + 1] != value:
            problems.append(f"args lack {flag} {value}")
    ports = {p["name"]: p["containerPort"] for p in container.get("ports", [])}
    for probe, path in (("livenessProbe", "/livez"), ("readinessProbe", "/readyz"), ("startupProbe", "/livez")):
        get = container.get(probe, {}).get("httpGet", {})
        if get.get("path") != path or ports.get(get.get("port")) != 8081:
            problems.append(f"{probe}: expected GET {path} on the status port 8081, got {get}")
    resources = container.get("resources", {})
    for part in ("requests", "limits"):
        if not {"cpu", "memory"} <= set(resources.get(part, {})):
            problems.append(f"resources.{part} lacks cpu or memory")
    context = container.get("securityContext", {})
    if context.get("allowPrivilegeEscalation") is not False or context.get("readOnlyRootFilesystem") is not True \
            or context.get("capabilities", {}).get("drop") != ["ALL"] or spec.get("securityContext", {}).get("runAsNonRoot") is not True:
        problems.append("the container is not non-root, read-only, without capabilities and privilege escalation")

    env = {e["name"]: e for e in container.get("env", [])}
    config_path = env.get("PUSHWORKER_CONFIG", {}).get("value")
    mounts = {m["name"]: m["mountPath"] for m in container.get("volumeMounts", [])}
    volumes = {v["name"]: v for v in spec.get("volumes", [])}
    configmap_file = None
    for name, volume in volumes.items():
        if name not in mounts:
            problems.append(f"volume {name} is not mounted")
            continue
        if "configMap" in volume:
            cm = find(docs, "ConfigMap", volume["configMap"]["name"])
            if not cm:
                problems.append(f"volume {name}: no ConfigMap {volume['configMap']['name']}")
                continue
            for item in volume["configMap"].get("items", []):
                if item["key"] not in cm.get("data", {}):
                    problems.append(f"ConfigMap {cm['metadata']['name']} has no key {item['key']}")
                if f"{mounts[name]}/{item['path']}" == config_path:
                    configmap_file = cm["data"][item["key"]]
        if "secret" in volume:
            secret = find(docs, "Secret", volume["secret"]["secretName"])
            keys = set((secret or {}).get("stringData", {})) | set((secret or {}).get("data", {}))
            for item in volume["secret"].get("items", []):
                if item["key"] not in keys:
                    problems.append(f"Secret {volume['secret']['secretName']} has no key {item['key']}")
    for name, variable in env.items():
        ref = variable.get("valueFrom", {}).get("secretKeyRef")
        if ref:
            secret = find(docs, "Secret", ref["name"])
            if not secret or ref["key"] not in secret.get("stringData", {}) | secret.get("data", {}):
                problems.append(f"env {name}: Secret {ref['name']} has no key {ref['key']}")
    for variable in ("PUSHWORKER_AMQP_URL", "PUSHWORKER_REDIS_URL"):
        if "secretKeyRef" not in env.get(variable, {}).get("valueFrom", {}):
            problems.append(f"{variable} does not come from a Secret")
    if configmap_file is None:
        problems.append(f"PUSHWORKER_CONFIG {config_path} is not a ConfigMap file mounted in the pod")
        return problems, notes
    config = yaml.safe_load(configmap_file)
    shutdown = seconds(str(config.get("worker", {}).get("shutdown_timeout", "30s")))
    grace = spec.get("terminationGracePeriodSeconds", 30)
    if grace <= shutdown:
        problems.append(f"terminationGracePeriodSeconds {grace} is not above shutdown_timeout {shutdown}s")
    # Every file the configuration names is in a mounted Secret.
    secret_paths = {f"{mounts[n]}/{i['path']}" for n, v in volumes.items() if "secret" in v for i in v["secret"].get("items", [])}
    for path in named_files(config):
        if path not in secret_paths:
            problems.append(f"the configuration names {path}, which no Secret item mounts")

    service = find(docs, "Service")
    if not service or not matches(service["spec"]["selector"], labels):
        problems.append("no Service selecting the worker pods")
    elif not any(p.get("targetPort") in ports or p.get("targetPort") == 8081 for p in service["spec"]["ports"]):
        problems.append("the Service's port is not the status port")
    pdb = find(docs, "PodDisruptionBudget")
    if not pdb or not matches(pdb["spec"]["selector"]["matchLabels"], labels):
        problems.append("no PodDisruptionBudget selecting the worker pods")
    monitor = find(docs, "ServiceMonitor")
    if monitor:
        if not service or not matches(monitor["spec"]["selector"]["matchLabels"], service["metadata"]["labels"]):
            problems.append("the ServiceMonitor selects no Service")
        elif {e.get("port") for e in monitor["spec"]["endpoints"]} - {p["name"] for p in service["spec"]["ports"]}:
            problems.append("the ServiceMonitor names a port the Service lacks")
        elif any(e.get("path") != "/metrics" for e in monitor["spec"]["endpoints"]):
            problems.append("the ServiceMonitor scrapes another path than /metrics")
    scaled = find(docs, "ScaledObject")
    if scaled:
        if scaled["spec"]["scaleTargetRef"]["name"] != deployment["metadata"]["name"]:
            problems.append("the ScaledObject scales another Deployment")
        triggers = scaled["spec"].get("triggers", [])
        queues = [t["metadata"].get("queueName") for t in triggers if t.get("type") == "rabbitmq"]
        if "push.jobs" not in queues:
            problems.append("no rabbitmq trigger on push.jobs")
        for trigger in triggers:
            if trigger["metadata"].get("mode") != "QueueLength":
                problems.append(f"trigger on {trigger['metadata'].get('queueName')}: mode is not QueueLength")
            auth = find(docs, "TriggerAuthentication", trigger.get("authenticationRef", {}).get("name"))
            if not auth:
                problems.append(f"trigger on {trigger['metadata'].get('queueName')}: no TriggerAuthentication")
                continue
            for ref in auth["spec"].get("secretTargetRef", []):
                secret = find(docs, "Secret", ref["name"])
                if not secret or ref["key"] not in secret.get("stringData", {}) | secret.get("data", {}):
                    problems.append(f"TriggerAuthentication: Secret {ref['name']} has no key {ref['key']}")
    hpa = find(docs, "HorizontalPodAutoscaler")
    if hpa and hpa["spec"]["scaleTargetRef"]["name"] != deployment["metadata"]["name"]:
        problems.append("the HPA scales another Deployment")
    notes.append(f"references: ConfigMap/Secret keys and mounts, probes /livez and /readyz on port 8081, "
                 f"terminationGracePeriodSeconds {grace} > shutdown_timeout {shutdown}s, Service, PDB"
                 + (", ServiceMonitor" if monitor else "") + (", ScaledObject → TriggerAuthentication → Secret" if scaled else "")
                 + (", HPA" if hpa else ""))
    return problems, notes, configmap_file


def check(folder, tool):
    problems, notes = validate(folder, tool)
    more = references(folder)
    return problems + more[0], notes + more[1]


def configmap_config(folder):
    """The configuration file the Deployment mounts as PUSHWORKER_CONFIG (text)."""
    result = references(folder)
    return result[2] if len(result) > 2 else None
