"""The operator's files in ``ops/``: the Prometheus alert rules pass ``promtool check
rules`` and their own ``promtool test rules`` unit tests, every dashboard query is valid
PromQL (promtool checks it as a recording rule), every metric they name is one the runner
exports (or one of the inbox-gap metrics), and the sdist ships them.

promtool comes with Debian's ``prometheus`` package; without it these tests skip, and fail
under ``FLIGHTSTATE_REQUIRE_SERVICES=1``.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
import tarfile
from pathlib import Path
from typing import Any

import pytest
from prometheus_client.core import Metric

from flightstate_runner.metrics import RunnerMetrics
from tests.fixtures.services import require_service
from tests.runner._cli import REPO

OPS = REPO / "ops"
RULES = OPS / "prometheus" / "flightstate-alerts.yml"
RULE_TESTS = OPS / "prometheus" / "flightstate-alerts.test.yml"
DASHBOARD = OPS / "grafana" / "flightstate-dashboard.json"

# Exported by the inbox-gap tracking (its own change); named here exactly as it exports them.
GAP_METRICS = {
    "flightstate_inbox_gaps_open",
    "flightstate_inbox_oldest_gap_age_seconds",
    "flightstate_inbox_late_rows_total",
    "flightstate_inbox_gaps_abandoned_total",
}
_SUFFIXES = {"counter": ("_total",), "histogram": ("_bucket", "_sum", "_count"),
             "gauge": ("",), "summary": ("_sum", "_count", "")}  # fmt: skip
_METRIC = re.compile(r"\bflightstate_[a-z_]+\b")


def _promtool() -> str:
    found = shutil.which("promtool")
    if found is None:
        require_service("promtool not installed (Debian: apt-get install prometheus)")
    return found


def _run(*argv: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(argv, capture_output=True, text=True, timeout=120, check=False)


def _exported() -> set[str]:
    """Sample names the runner's registry exposes on /metrics."""
    families: list[Metric] = list(RunnerMetrics().registry.collect())
    return {f.name + suffix for f in families for suffix in _SUFFIXES[f.type]}


def _dashboard_exprs() -> list[str]:
    dashboard = json.loads(DASHBOARD.read_text(encoding="utf-8"))
    return [target["expr"] for panel in dashboard["panels"]
            for target in panel.get("targets", [])]  # fmt: skip


_ALERT = re.compile(r"- alert: (?P<alert>\w+)\n.*?\bexpr: (?P<expr>.*?)\n\s+for:", re.S)


def _rules() -> list[dict[str, Any]]:
    """Each alert's name and expression, read from the rule file (no YAML parser is a
    dependency here; the file keeps ``alert``, comments, ``expr``, ``for`` in that order,
    which ``promtool check rules`` holds to the rule count below)."""
    text = RULES.read_text(encoding="utf-8")
    return [{"alert": m["alert"], "expr": m["expr"]} for m in _ALERT.finditer(text)]


def test_alert_rules_pass_promtool_check() -> None:
    result = _run(_promtool(), "check", "rules", str(RULES))
    assert result.returncode == 0, result.stdout + result.stderr
    assert f"SUCCESS: {len(_rules())} rules found" in result.stdout


def test_alert_rules_fire_as_their_unit_tests_say() -> None:
    result = _run(_promtool(), "test", "rules", str(RULE_TESTS))
    assert result.returncode == 0, result.stdout + result.stderr
    assert "SUCCESS" in result.stdout
    tested = set(re.findall(r"alertname: (\w+)", RULE_TESTS.read_text(encoding="utf-8")))
    assert tested == {rule["alert"] for rule in _rules()}  # every alert has a unit test


def test_dashboard_queries_are_valid_promql(tmp_path: Path) -> None:
    # Grafana's variables, as Grafana substitutes them, then each query as a recording rule.
    exprs = [e.replace("$__rate_interval", "5m").replace("$job", ".*") for e in _dashboard_exprs()]
    lines = ["groups:", "  - name: dashboard", "    rules:"]
    for n, expr in enumerate(exprs):  # a JSON string is a YAML double-quoted scalar
        lines += [f"      - record: dashboard:query_{n}", f"        expr: {json.dumps(expr)}"]
    path = tmp_path / "dashboard-queries.yml"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    result = _run(_promtool(), "check", "rules", str(path))
    assert result.returncode == 0, result.stdout + result.stderr
    assert f"SUCCESS: {len(exprs)} rules found" in result.stdout


def test_dashboard_and_rules_name_only_exported_metrics() -> None:
    known = _exported() | GAP_METRICS
    used = {name for expr in _dashboard_exprs() + [r["expr"] for r in _rules()]
            for name in _METRIC.findall(expr)}  # fmt: skip
    assert sorted(used - known) == []


def test_dashboard_shows_what_the_operator_looks_for() -> None:
    used = {name for expr in _dashboard_exprs() for name in _METRIC.findall(expr)}
    wanted = {
        "flightstate_inbox_head_age_seconds", "flightstate_transaction_seconds_bucket",  # fresh
        "flightstate_receive_to_commit_seconds_bucket",  # freshness, both ends
        "flightstate_commit_to_delivered_seconds_bucket",
        "flightstate_inbox_lag_messages", "flightstate_backfill_backlog",  # backlog
        "flightstate_messages_total", "flightstate_dead_messages_total",  # outcomes, DEAD
        "flightstate_leader", "flightstate_outbox_backlog", "flightstate_outbox_oldest_age_seconds",
    } | GAP_METRICS  # fmt: skip
    assert sorted(wanted - used) == []


def test_each_alert_watches_its_metric() -> None:
    watched = {rule["alert"]: set(_METRIC.findall(rule["expr"])) for rule in _rules()}
    assert watched == {
        "FlightstateLeaderAbsent": {"flightstate_leader"},
        "FlightstateInboxHeadAge": {"flightstate_inbox_head_age_seconds"},
        "FlightstateDeadRate": {"flightstate_messages_total"},
        "FlightstateOutboxBacklog": {"flightstate_outbox_oldest_age_seconds"},
        "FlightstateInboxGapOld": {"flightstate_inbox_oldest_gap_age_seconds"},
        "FlightstateOutboxEventParked": {"flightstate_outbox_events_parked_total"},
    }


@pytest.mark.slow
def test_sdist_ships_the_ops_files(tmp_path: Path) -> None:
    source = tmp_path / "src"  # a copy: building writes egg-info next to pyproject.toml
    shutil.copytree(
        REPO,
        source,
        ignore=shutil.ignore_patterns(
            ".git", ".venv", ".nox", "__pycache__", "*.egg-info", "build", "dist", ".*_cache"
        ),
    )
    out = tmp_path / "dist"
    built = subprocess.run(
        [sys.executable, "-c", "import sys; from setuptools import build_meta as b; "
         "print(b.build_sdist(sys.argv[1]))", str(out)],
        cwd=source, capture_output=True, text=True, timeout=300, check=False,
    )  # fmt: skip
    assert built.returncode == 0, built.stderr[-3000:]
    name = built.stdout.strip().splitlines()[-1]
    with tarfile.open(out / name) as sdist:
        members = {m.split("/", 1)[1] for m in sdist.getnames() if "/" in m}
    assert {str(p.relative_to(REPO)) for p in (RULES, RULE_TESTS, DASHBOARD)} <= members
