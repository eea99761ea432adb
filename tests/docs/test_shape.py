"""The documents keep the shape their readers rely on: a short README holding the two
commands exactly as CI runs the second, a design that reads as a design (no measurement
log: figures live in docs/benchmarks.md, their history in the repository's history), and
the generated configuration reference linked from the README."""

from __future__ import annotations

import re

from tests.docs._markdown import fenced_blocks, section
from tests.fixtures.corpus import REPO_ROOT

README = REPO_ROOT / "README.md"
DESIGN = REPO_ROOT / "docs" / "design.md"
TEST_COMMAND = "python -m pytest -q -n 2"
_ROUNDS = re.compile(
    r"\b(first|second|third|fourth|fifth|sixth|seventh|eighth|ninth|\d+(st|nd|rd|th)) round\b",
    re.IGNORECASE,
)


def _lines(path_text: str) -> int:
    return len(path_text.splitlines())


def test_the_readme_is_short() -> None:
    assert _lines(README.read_text(encoding="utf-8")) <= 250


def test_the_design_is_short_and_holds_no_measurement_log() -> None:
    text = DESIGN.read_text(encoding="utf-8")
    assert _lines(text) <= 500
    assert _ROUNDS.findall(text) == []
    assert re.findall(r"\b20\d\d-\d\d-\d\d\b", text) == []  # dated measurements
    assert re.findall(r"\b(?=[0-9a-f]*[a-f])(?=[0-9a-f]*\d)[0-9a-f]{7,40}\b", text) == []  # commits


def test_no_document_keeps_a_log_of_rounds() -> None:
    for path in [README, *sorted((REPO_ROOT / "docs").glob("*.md"))]:
        assert _ROUNDS.findall(path.read_text(encoding="utf-8")) == [], path.name


def test_the_two_commands_are_there_and_ci_runs_the_second_exactly() -> None:
    commands = fenced_blocks(section(README.read_text(encoding="utf-8"), "The two commands"), "sh")
    setup, tests = commands[0].strip(), commands[1].strip()
    assert setup.endswith("pip install --no-deps -e . && flightstate demo")
    assert "pip install -r requirements/dev.txt" in setup
    assert tests == TEST_COMMAND
    ci = (REPO_ROOT / ".ci" / "run").read_text(encoding="utf-8")
    assert [line for line in ci.splitlines() if line.strip()][-1] == TEST_COMMAND
