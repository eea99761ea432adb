"""The systemd unit and environment file shipped in ``flightstate_runner/deploy``
(docs/deployment.md): the unit passes ``systemd-analyze verify`` with its install paths
pointed at this machine's, its command line is one the CLI accepts, and every variable of
the environment file is a setting that loads."""

from __future__ import annotations

import shlex
import shutil
import subprocess
import sys
from importlib.resources import files
from pathlib import Path

import pytest
from attrs import fields

from flightstate_runner.config import ENV_PREFIX, RunnerConfig, load_config

DEPLOY = files("flightstate_runner") / "deploy"
UNIT_EXEC = "/opt/flightstate/venv/bin/flightstate"
UNIT_ENV_FILE = "/etc/flightstate/flightstate.env"


def _unit() -> str:
    return (DEPLOY / "flightstate.service").read_text(encoding="utf-8")


def _env_file() -> dict[str, str]:
    text = (DEPLOY / "flightstate.env").read_text(encoding="utf-8")
    pairs = [line.split("=", 1) for line in text.splitlines()
             if line.strip() and not line.lstrip().startswith("#")]  # fmt: skip
    return {key: value for key, value in pairs}  # noqa: C416 - pairs of two, as mypy sees


def _installed_command() -> Path:
    command = Path(sys.executable).parent / "flightstate"
    if not command.exists():
        pytest.skip("no `flightstate` command beside this interpreter (project not installed)")
    return command


def test_the_unit_passes_systemd_analyze_verify(tmp_path: Path) -> None:
    analyze = shutil.which("systemd-analyze")
    if analyze is None:
        pytest.skip("systemd-analyze is not installed here (Debian: apt-get install systemd)")
    env_file = tmp_path / "flightstate.env"
    env_file.write_text((DEPLOY / "flightstate.env").read_text(encoding="utf-8"))
    unit = _unit()
    assert UNIT_EXEC in unit  # the paths docs/deployment.md names
    assert UNIT_ENV_FILE in unit
    unit = unit.replace(UNIT_EXEC, str(_installed_command()))
    (tmp_path / "flightstate.service").write_text(unit.replace(UNIT_ENV_FILE, str(env_file)))
    done = subprocess.run([analyze, "verify", "./flightstate.service"], cwd=tmp_path,
                          capture_output=True, text=True, timeout=60, check=False)  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert done.stderr == ""  # unknown keys and bad values are only warnings: none allowed


def test_the_units_command_line_is_accepted_by_the_cli() -> None:
    (exec_line,) = [line for line in _unit().splitlines() if line.startswith("ExecStart=")]
    argv = shlex.split(exec_line.removeprefix("ExecStart="))
    assert argv[0] == UNIT_EXEC
    done = subprocess.run([str(_installed_command()), *argv[1:], "--help"], capture_output=True,
                          text=True, timeout=60, check=False)  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "--until-idle" in done.stdout  # the `run` command's own help


def test_every_variable_of_the_environment_file_is_a_setting_that_loads() -> None:
    environ = _env_file()
    settings = {ENV_PREFIX + f.name.upper() for f in fields(RunnerConfig)}
    assert sorted(set(environ) - settings) == []
    config = load_config(environ=environ)
    assert config.metrics_port == int(environ["FLIGHTSTATE_METRICS_PORT"])
    assert config.inbox_table == environ["FLIGHTSTATE_INBOX_TABLE"]
