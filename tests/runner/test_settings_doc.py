"""docs/configuration.md is the generated settings reference, and it is current: every
setting ``RunnerConfig`` reads has its row, with its variable, default and range, and a
setting added or removed without regenerating the file fails here."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from attrs import fields

from flightstate_runner.config import ENV_PREFIX, RunnerConfig
from flightstate_runner.settings_doc import COMMAND, main, render
from tests.runner._cli import REPO

REFERENCE = REPO / "docs" / "configuration.md"


def test_the_committed_reference_is_the_generators_output() -> None:
    assert REFERENCE.read_text(encoding="utf-8") == render(), f"regenerate it: {COMMAND}"


def test_every_setting_has_its_row_with_variable_and_toml_key() -> None:
    rows = [line for line in render().splitlines() if line.startswith("| `")]
    names = [f.name for f in fields(RunnerConfig)]
    for name in names:
        (row,) = [r for r in rows if r.startswith(f"| `{name}`<br>")]
        assert f"`{ENV_PREFIX}{name.upper()}`" in row
    assert len(rows) == len(names)


def test_ranges_and_defaults_come_from_the_fields() -> None:
    (row,) = [r for r in render().splitlines() if r.startswith("| `gap_grace`")]
    assert "| `1` | [0, 3,600] |" in row  # in_range(0, 3600), default 1.0
    (row,) = [r for r in render().splitlines() if r.startswith("| `batch_size`")]
    assert "| `1,000` | (0, 100,000] |" in row  # _positive: open at 0


def test_check_fails_on_a_stale_file(tmp_path: Path) -> None:
    stale = tmp_path / "configuration.md"
    stale.write_text(render().replace("gap_grace", "gap_grase", 1), encoding="utf-8")
    said: list[str] = []
    assert main(["--check", str(stale)], out=said.append) == 1
    assert COMMAND in said[0]
    stale.write_text(render(), encoding="utf-8")
    assert main(["--check", str(stale)], out=said.append) == 0


def test_the_documented_command_regenerates_the_file() -> None:
    """The command docs/configuration.md names, run as a user runs it."""
    done = subprocess.run([sys.executable, "-m", "flightstate_runner.settings_doc"], cwd=REPO,
                          capture_output=True, text=True, check=True, timeout=60)  # fmt: skip
    assert done.stdout == REFERENCE.read_text(encoding="utf-8")
