"""The global options are accepted before the command and after it; after it, they override
the same option before it; a usage error is one line and exit code 2."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.runner._cli import run_cli


@pytest.mark.pg
def test_store_dsn_after_the_command_reaches_the_store(pg_db: str) -> None:
    done = run_cli("migrate", "--store-dsn", pg_db, "--log-level", "ERROR", timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("applied ")
    assert run_cli("inbox-init", "--store-dsn", pg_db, "--inbox", "store",
                   timeout=120).returncode == 0  # fmt: skip
    before = run_cli("--store-dsn", pg_db, "status", "--json", "--inbox", "store", timeout=120)
    after = run_cli("--store-dsn", "memory://elsewhere", "--inbox", "store", "status", "--json",
                    "--store-dsn", pg_db, env={"FLIGHTSTATE_LOG_LEVEL": "ERROR"},
                    timeout=120)  # fmt: skip
    assert (before.returncode, after.returncode) == (0, 0), before.stderr + after.stderr
    assert json.loads(before.stdout)["store"] == json.loads(after.stdout)["store"] == "postgresql"


def test_config_file_after_the_command_is_read(tmp_path: Path) -> None:
    settings = tmp_path / "site.toml"
    settings.write_text("[flightstate]\nbatch_size = 0\n", encoding="utf-8")
    done = run_cli("status", "--config", str(settings), timeout=60)
    assert done.returncode == 2
    assert done.stderr.startswith("configuration error: ")
    assert "batch_size" in done.stderr
    assert len(done.stderr.splitlines()) == 1, done.stderr


@pytest.mark.parametrize(
    ("args", "words"),
    [
        (["nosuch"], "No such command 'nosuch'"),
        (["status", "--bogus"], "No such option '--bogus'"),
        (["--bogus", "status"], "No such option '--bogus'"),
        (["status", "--store-dsn"], "'--store-dsn' requires an argument"),
    ],
)
def test_a_usage_error_is_one_line_and_exit_2(args: list[str], words: str) -> None:
    done = run_cli(*args, timeout=60)
    assert done.returncode == 2
    assert done.stderr.startswith("usage error: "), done.stderr
    assert words in done.stderr
    assert len(done.stderr.splitlines()) == 1, done.stderr
    assert "--help" in done.stderr  # where to look next


def test_subcommand_help_points_at_the_global_options() -> None:
    done = run_cli("status", "--help", timeout=60)
    assert done.returncode == 0
    assert "Global options (flightstate --help) may also follow the command." in done.stdout
    assert "--store-dsn" not in done.stdout  # listed once, by flightstate --help
