"""A misspelled ``FLIGHTSTATE_*`` variable is one warning naming it and the nearest setting;
the variables the project's own tools read (tests, plugin, selftest) never warn."""

from __future__ import annotations

import json
import re

import pytest
from attrs import fields

from flightstate_runner.config import ENV_PREFIX, RunnerConfig
from flightstate_runner.environment import unknown_variables
from tests.fixtures.corpus import REPO_ROOT
from tests.runner._cli import run_cli

_NAME = re.compile(r"\bFLIGHTSTATE_[A-Z0-9_]*[A-Z0-9]\b(?![*_])")
_READERS = ("flightstate_core", "flightstate_pg", "flightstate_oracle", "flightstate_kafka",
            "flightstate_mysql", "flightstate_runner", "flightstate_testing", "tests",
            "benchmarks", "ops", "examples")  # fmt: skip
_TYPOS = ("test_unknown_variables.py",)  # this file's own misspellings


def test_a_typo_names_the_nearest_setting() -> None:
    assert unknown_variables({"FLIGHTSTATE_STOR_DSN": "x"}) == [
        "FLIGHTSTATE_STOR_DSN is not a flightstate setting and is ignored "
        "(did you mean FLIGHTSTATE_STORE_DSN?)"
    ]
    assert unknown_variables(["flightstate_lease_ttl"]) == [
        "flightstate_lease_ttl is not a flightstate setting and is ignored "
        "(did you mean FLIGHTSTATE_LEASE_TTL?)"
    ]
    assert unknown_variables(["FLIGHTSTATE_BANANA"]) == [
        "FLIGHTSTATE_BANANA is not a flightstate setting and is ignored"
    ]


def test_settings_and_the_tools_own_variables_do_not_warn() -> None:
    settings = [ENV_PREFIX + f.name.upper() for f in fields(RunnerConfig)]
    tools = ["FLIGHTSTATE_TEST_PG_DSN", "FLIGHTSTATE_TEST_ANYTHING", "FLIGHTSTATE_CORPUS_DIR",
             "FLIGHTSTATE_REQUIRE_SERVICES", "FLIGHTSTATE_SELFTEST_STORE_DSN",
             "FLIGHTSTATE_SELFTEST_PREFIX", "PATH", "FLIGHT_STATE"]  # fmt: skip
    assert unknown_variables([*settings, *tools]) == []


def test_no_variable_the_project_reads_or_documents_warns() -> None:
    """Every ``FLIGHTSTATE_*`` name in the code, tests, scripts and documents is known: a
    new variable read somewhere must be added to ``NOT_SETTINGS`` (or become a setting)."""
    found: set[str] = set()
    files = [p for top in _READERS for p in (REPO_ROOT / top).rglob("*.py")]
    files += [*(REPO_ROOT / "docs").rglob("*.md"), REPO_ROOT / "README.md",
              REPO_ROOT / "noxfile.py"]  # fmt: skip
    for path in files:
        if path.name not in _TYPOS:
            found |= set(_NAME.findall(path.read_text(encoding="utf-8")))
    assert len(found) > 40  # the pattern finds the settings' names
    assert unknown_variables(found) == []


@pytest.mark.pg
def test_the_cli_warns_once_on_stderr_and_in_the_log(pg_db: str) -> None:
    env = {"FLIGHTSTATE_LOG_LEVLE": "DEBUG", "FLIGHTSTATE_TEST_PG_DSN": pg_db,
           "FLIGHTSTATE_REQUIRE_SERVICES": "1"}  # fmt: skip
    done = run_cli("migrate", "--store-dsn", pg_db, env=env, timeout=120)
    assert done.returncode == 0, done.stderr
    expected = ("FLIGHTSTATE_LOG_LEVLE is not a flightstate setting and is ignored "
                "(did you mean FLIGHTSTATE_LOG_LEVEL?)")  # fmt: skip
    lines = done.stderr.splitlines()
    assert [line for line in lines if line.startswith("warning: ")] == [f"warning: {expected}"]
    logged = [json.loads(line) for line in lines if line.startswith("{")]
    warned = [entry for entry in logged if entry.get("event") == "unknown_variable"]
    assert [(w["level"], w["msg"]) for w in warned] == [("WARNING", expected)]
    assert "TEST_PG_DSN" not in done.stderr
    assert "REQUIRE_SERVICES" not in done.stderr
