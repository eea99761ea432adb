"""``flightstate --version``: the installed distribution's version, and from a checkout
that is not installed the version its pyproject.toml declares."""

from __future__ import annotations

import tomllib
from importlib import metadata

import pytest
from click.testing import CliRunner

from flightstate_runner import version
from flightstate_runner.cli import cli
from tests.fixtures.corpus import REPO_ROOT
from tests.runner._cli import run_cli

DECLARED = tomllib.loads((REPO_ROOT / "pyproject.toml").read_text("utf-8"))["project"]["version"]


def test_version_is_the_installed_distributions() -> None:
    done = run_cli("--version", timeout=60)
    assert (done.returncode, done.stderr) == (0, "")
    assert done.stdout == f"flightstate {metadata.version('flightstate')}\n"


def test_a_checkout_that_is_not_installed_says_so(monkeypatch: pytest.MonkeyPatch) -> None:
    def not_installed(name: str) -> str:
        raise metadata.PackageNotFoundError(name)

    monkeypatch.setattr(version.metadata, "version", not_installed)
    done = CliRunner().invoke(cli, ["--version"])
    assert done.exit_code == 0
    assert done.output == f"flightstate {DECLARED} (source checkout, not installed)\n"
    monkeypatch.setattr(version, "_PYPROJECT", REPO_ROOT / "no-such-pyproject.toml")
    assert version.package_version() == "unknown (not installed)"
