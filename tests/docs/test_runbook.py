"""Every Prometheus alert rule in ops/ has its runbook entry in docs/operations.md: a
heading named after the alert under "Alerts", saying what it means and what to do."""

from __future__ import annotations

import re

from tests.docs._markdown import headings, section
from tests.fixtures.corpus import REPO_ROOT

OPERATIONS = REPO_ROOT / "docs" / "operations.md"


def _alert_names() -> list[str]:
    rules = sorted((REPO_ROOT / "ops" / "prometheus").glob("*.yml"))
    alert = re.compile(r"^\s*- alert:\s*(\S+)", re.MULTILINE)
    names = [name for path in rules if not path.name.endswith(".test.yml")
             for name in alert.findall(path.read_text(encoding="utf-8"))]  # fmt: skip
    assert names, "no alert rules found in ops/prometheus"
    return names


def test_every_alert_rule_has_a_runbook_entry() -> None:
    alerts = section(OPERATIONS.read_text(encoding="utf-8"), "Alerts")
    entries = {text for level, text in headings(alerts) if level == 3}
    assert sorted(set(_alert_names()) - entries) == []  # alerts without an entry
    assert sorted(entries - set(_alert_names())) == []  # entries of alerts that do not exist
    for name in _alert_names():
        entry = section(alerts, name)
        assert "**Means:**" in entry, name
        assert "**Do:**" in entry, name
