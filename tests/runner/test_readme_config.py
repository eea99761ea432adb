"""The README's configuration table lists every setting ``RunnerConfig`` reads, and only
those (a setting added without a row, or a row left behind by a removed one, fails)."""

from __future__ import annotations

import re

from attrs import fields

from flightstate_runner.config import ENV_PREFIX, RunnerConfig
from tests.runner._cli import REPO


def _table_variables() -> set[str]:
    text = (REPO / "README.md").read_text(encoding="utf-8")
    section = text.split("\n## Configuration\n", 1)[1].split("\n## ", 1)[0]
    rows = [line for line in section.splitlines() if line.startswith("| `")]
    return {name for row in rows for name in re.findall(r"`(FLIGHTSTATE_\w+)`", row.split("|")[1])}


def test_every_runner_setting_has_a_row() -> None:
    settings = {ENV_PREFIX + f.name.upper() for f in fields(RunnerConfig)}
    documented = _table_variables()
    assert sorted(settings - documented) == []  # missing rows
    assert sorted(documented - settings) == []  # rows of settings that do not exist
