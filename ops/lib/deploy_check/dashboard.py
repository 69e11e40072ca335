"""Checks of ops/deploy/grafana-dashboard.json: its structure, and every query parsed as PromQL and
held against the metrics the worker and RabbitMQ export (metrics.py)."""
import json
import re

import promql_parser

from .metrics import RABBITMQ, SCRAPE_LABELS, WORKER

KNOWN = {**WORKER, **RABBITMQ}
RATE_FUNCTIONS = {"rate", "irate", "increase"}
GRAFANA_RANGES = {"__rate_interval": "5m", "__interval": "1m", "__range": "1h"}


def substitute(expr, variables):
    """Grafana's variables replaced by something PromQL parses: ranges by durations, the others
    (inside label values) by a plain word."""
    def one(match):
        name = match.group(1) or match.group(2)
        if name in GRAFANA_RANGES:
            return GRAFANA_RANGES[name]
        if name not in variables:
            raise ValueError(f"uses ${name}, which the dashboard does not define")
        return "x"
    return re.sub(r"\$\{(\w+)(?::\w+)?\}|\$(\w+)", one, expr)


class Walk:
    """Every selector with the functions around it, and every aggregation's `by` labels with the
    selectors under it."""

    def __init__(self):
        self.selectors = []      # (name, matcher labels, enclosing function names)
        self.groupings = []      # (labels, selector names below)

    def visit(self, node, functions=()):
        kind = type(node).__name__
        if kind == "VectorSelector":
            labels = {m.name for m in node.matchers.matchers} if node.matchers else set()
            self.selectors.append((node.name, labels, functions))
            return [node.name]
        if kind == "MatrixSelector":
            return self.visit(node.vector_selector, functions)
        if kind == "Call":
            names = []
            for arg in node.args:
                names += self.visit(arg, functions + (node.func.name,))
            return names
        if kind == "AggregateExpr":
            names = self.visit(node.expr, functions + (str(node.op),))
            if node.param is not None:
                names += self.visit(node.param, functions)
            if node.modifier is not None and node.modifier.labels:
                self.groupings.append((set(node.modifier.labels), names))
            return names
        if kind == "BinaryExpr":
            return self.visit(node.lhs, functions) + self.visit(node.rhs, functions)
        if kind in ("ParenExpr", "UnaryExpr", "SubqueryExpr"):
            return self.visit(node.expr, functions)
        return []   # literals


def base_name(name):
    """(metric, suffix) with a histogram's _bucket/_sum/_count split off."""
    for suffix in ("_bucket", "_sum", "_count"):
        if name.endswith(suffix) and name[: -len(suffix)] in KNOWN and KNOWN[name[: -len(suffix)]][0] == "histogram":
            return name[: -len(suffix)], suffix
    return name, ""


def check_expr(expr, variables):
    """Problems with one query (empty: none), and the metrics it uses."""
    problems, used = [], set()
    try:
        tree = promql_parser.parse(substitute(expr, variables))
    except ValueError as error:
        return [f"not PromQL: {error}"], used
    walk = Walk()
    walk.visit(tree)
    for name, labels, functions in walk.selectors:
        metric, suffix = base_name(name)
        if metric not in KNOWN:
            problems.append(f"{name}: not a metric of the worker or of rabbitmq_prometheus")
            continue
        used.add(metric)
        kind, allowed = KNOWN[metric]
        if kind == "histogram" and suffix == "":
            problems.append(f"{name}: a histogram is read through _bucket, _sum or _count")
        if (kind == "counter" or suffix) and not RATE_FUNCTIONS & set(functions):
            problems.append(f"{name}: a counter outside rate()/increase()")
        if kind == "gauge" and RATE_FUNCTIONS & set(functions):
            problems.append(f"{name}: rate() of a gauge")
        if suffix == "_bucket" and "histogram_quantile" not in functions:
            problems.append(f"{name}: buckets outside histogram_quantile()")
        extra = labels - allowed - SCRAPE_LABELS - {"__name__"} - ({"le"} if suffix == "_bucket" else set())
        if extra:
            problems.append(f"{name}: no label {', '.join(sorted(extra))}")
    for labels, names in walk.groupings:
        allowed = set(SCRAPE_LABELS)
        for name in names:
            metric, suffix = base_name(name)
            if metric in KNOWN:
                allowed |= KNOWN[metric][1] | ({"le"} if suffix == "_bucket" else set())
        extra = labels - allowed
        if extra:
            problems.append(f"by ({', '.join(sorted(labels))}): {', '.join(sorted(extra))} is on none of {', '.join(sorted(set(names)))}")
    return problems, used


def check(path):
    """(problems, notes): every problem found, and what was checked."""
    problems = []
    try:
        dashboard = json.loads(open(path).read())
    except (OSError, ValueError) as error:
        return [f"{path}: not JSON: {error}"], []
    variables = {v.get("name") for v in dashboard.get("templating", {}).get("list", [])}
    datasource_variables = {v.get("name") for v in dashboard.get("templating", {}).get("list", [])
                            if v.get("type") == "datasource" and v.get("query") == "prometheus"}
    for key in ("uid", "title", "panels", "schemaVersion"):
        if key not in dashboard:
            problems.append(f"no {key}")
    panels = []
    for panel in dashboard.get("panels", []):
        panels.append(panel)
        panels += panel.get("panels", [])     # a collapsed row's panels
    ids = [p.get("id") for p in panels]
    if len(ids) != len(set(ids)):
        problems.append("panel ids repeat")
    used, queries = set(), 0
    for panel in panels:
        if panel.get("type") == "row":
            continue
        title = panel.get("title", f"panel {panel.get('id')}")
        if "gridPos" not in panel:
            problems.append(f"{title}: no gridPos")

        def datasource_ok(ds):
            return isinstance(ds, dict) and ds.get("type") == "prometheus" and \
                (ds.get("uid") in {f"${{{v}}}" for v in datasource_variables} | {f"${v}" for v in datasource_variables})
        if not datasource_ok(panel.get("datasource")):
            problems.append(f"{title}: no Prometheus datasource through the dashboard's datasource variable")
        targets = panel.get("targets") or []
        if not targets:
            problems.append(f"{title}: no targets")
        for target in targets:
            queries += 1
            if not target.get("expr") or not target.get("refId"):
                problems.append(f"{title}: a target without expr or refId")
                continue
            if "datasource" in target and not datasource_ok(target["datasource"]):
                problems.append(f"{title} {target['refId']}: another datasource")
            found, metrics = check_expr(target["expr"], variables)
            used |= metrics
            problems += [f"{title} {target['refId']}: {p}" for p in found]
    for variable in dashboard.get("templating", {}).get("list", []):
        query = variable.get("query")
        if variable.get("type") == "query":
            text = query.get("query") if isinstance(query, dict) else query
            match = re.fullmatch(r"label_values\((\w+),\s*(\w+)\)", text or "")
            if not match:
                problems.append(f"variable {variable.get('name')}: expected label_values(metric, label), got {text!r}")
            elif match.group(1) not in KNOWN or match.group(2) not in KNOWN[match.group(1)][1] | SCRAPE_LABELS:
                problems.append(f"variable {variable.get('name')}: {text}: no such metric or label")
            else:
                used.add(match.group(1))
    unused = sorted(set(WORKER) - used)
    if unused:
        problems.append(f"worker metrics on no panel: {', '.join(unused)}")
    notes = [f"{len([p for p in panels if p.get('type') != 'row'])} panels, {queries} queries parsed as PromQL; "
             f"{len(used & set(WORKER))} of {len(WORKER)} worker metrics used, "
             f"{len(used & set(RABBITMQ))} RabbitMQ ones ({', '.join(sorted(used & set(RABBITMQ)))})"]
    return problems, notes
