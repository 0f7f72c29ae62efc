"""The deployment files of deploy/ (docs/operations.md) parse and say what the drain needs: the
app's readiness probe is ``/api/ready`` and its liveness probe ``/api/health`` (both routes of the
app), a ``preStop`` pause shorter than the termination grace, rolling updates that never go below
the replicas asked for, Redis with its append-only file; the alert rules and the dashboard parse
and use only metrics the app exports."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import yaml

from app.main import create_app
from app.metrics import REGISTRY

ROOT = Path(__file__).resolve().parents[1]
KUBE = ROOT / "deploy" / "kubernetes"
MONITORING = ROOT / "deploy" / "monitoring"


def _documents() -> list[dict[str, Any]]:
    docs = []
    for path in sorted(KUBE.glob("*.yaml")):
        docs += [doc for doc in yaml.safe_load_all(path.read_text()) if doc]
    return docs


def _by_kind(kind: str, name: str) -> dict[str, Any]:
    return next(doc for doc in _documents() if doc["kind"] == kind and doc["metadata"]["name"] == name)


def _exported_metrics() -> set[str]:
    names = {"up"}  # Prometheus's own
    for family in REGISTRY.collect():
        names.add(family.name)
        if family.type == "counter":
            names.add(f"{family.name}_total")
        if family.type == "histogram":
            names |= {f"{family.name}_{part}" for part in ("bucket", "sum", "count")}
    return names


def _metrics_in(expr: str) -> set[str]:
    words = set(re.findall(r"\b([a-z_][a-z0-9_]*)\s*(?:\{|\[|\))", expr))
    return {word for word in words if word.startswith("durak_") or word == "up"}


def test_every_manifest_parses_and_names_its_kind() -> None:
    docs = _documents()
    assert {doc["kind"] for doc in docs} >= {"Deployment", "Service", "PodDisruptionBudget", "Job", "StatefulSet"}
    for doc in docs:
        assert doc["apiVersion"] and doc["metadata"]["name"]


def test_the_app_deployment_drains_before_it_stops() -> None:
    app = _by_kind("Deployment", "durak-app")
    spec = app["spec"]
    assert spec["strategy"]["rollingUpdate"]["maxUnavailable"] == 0  # a new pod is ready before an old one goes
    assert spec["replicas"] >= 2
    pod = spec["template"]["spec"]
    (container,) = pod["containers"]
    assert container["readinessProbe"]["httpGet"]["path"] == "/api/ready"
    assert container["livenessProbe"]["httpGet"]["path"] == "/api/health"
    assert {"/api/ready", "/api/health"} <= set(create_app().openapi()["paths"])
    pause = container["lifecycle"]["preStop"]["exec"]["command"]
    seconds = float(re.search(r"sleep\((\d+(?:\.\d+)?)\)", " ".join(pause)).group(1))  # type: ignore[union-attr]
    # The pause, the drain (a few seconds at most) and uvicorn's shutdown fit in the grace period.
    assert seconds + 15 <= pod["terminationGracePeriodSeconds"]
    env = {item["name"] for item in container["env"]}
    assert {"DURAK_DATABASE_URL", "DURAK_SECRET_KEY", "DURAK_BROKER_URL", "DURAK_HOST"} <= env
    service = _by_kind("Service", "durak-app")
    assert service["spec"]["selector"] == spec["selector"]["matchLabels"]


def test_redis_keeps_an_append_only_file_on_a_volume() -> None:
    redis = _by_kind("StatefulSet", "durak-redis")
    (container,) = redis["spec"]["template"]["spec"]["containers"]
    args = container["args"]
    assert args[args.index("--appendonly") + 1] == "yes"
    assert {mount["mountPath"] for mount in container["volumeMounts"]} == {"/data"}


def test_the_alerts_and_the_dashboard_parse_and_use_exported_metrics() -> None:
    exported = _exported_metrics()
    rules = yaml.safe_load((MONITORING / "alerts.yml").read_text())
    alerts = [rule for group in rules["groups"] for rule in group["rules"]]
    assert len(alerts) >= 5
    for rule in alerts:
        assert rule["alert"] and rule["annotations"]["runbook"].startswith("docs/operations.md#")
        used = _metrics_in(rule["expr"])
        assert used and used <= exported, (rule["alert"], used - exported)
    dashboard = json.loads((MONITORING / "dashboard.json").read_text())
    exprs = [target["expr"] for panel in dashboard["panels"] for target in panel["targets"]]
    assert exprs
    for expr in exprs:
        used = _metrics_in(expr)
        assert used and used <= exported, (expr, used - exported)
    runbook = (ROOT / "docs" / "operations.md").read_text()
    anchors = {
        re.sub(r"[^a-z0-9 -]", "", line[4:].strip().lower()).replace(" ", "-")
        for line in runbook.splitlines()
        if line.startswith("### ")
    }
    for rule in alerts:
        assert rule["annotations"]["runbook"].split("#", 1)[1] in anchors, rule["annotations"]["runbook"]
