"""The commands the documents tell a user to run exist, with the options they show.

Each ``flightstate COMMAND --option`` in a code span or a fenced block of the README and
docs/ must be a command of the CLI that accepts those options; the README's table of
commands must list every command, and ``flightstate --help`` (run from a checkout, as the
README says: ``python examples/runner.py``) must list each documented one. Running them is
the business of the tests of each command (tests/runner); here the documents are held to
the CLI."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import click
import pytest

from flightstate_runner.cli import _config, cli, command
from flightstate_runner.maintenance import register
from tests.docs._markdown import DOCUMENTS, code_lines, section
from tests.fixtures.corpus import REPO_ROOT

README = REPO_ROOT / "README.md"
_USE = re.compile(r"(?:^|[\s/`(])flightstate ([a-z][a-z-]*)((?: +(?:[^\s`|;&]+))*)")


def _commands() -> dict[str, click.Command]:
    """The CLI's commands, those the maintenance module adds included (as ``main`` does)."""
    assert isinstance(cli, click.Group)
    if "cleanup" not in cli.commands:
        register(cli, command, _config)
    return dict(cli.commands)


def _options(found: click.Command) -> set[str]:
    return {opt for param in found.params for opt in (*param.opts, *param.secondary_opts)}


def _documented_uses() -> Iterator[tuple[str, str, list[str]]]:
    for document in DOCUMENTS:
        for line in code_lines(document.read_text(encoding="utf-8")):
            for name, rest in _USE.findall(line):
                options = [word.split("=")[0] for word in rest.split() if word.startswith("--")]
                yield document.name, name, options


def _problems(uses: Iterator[tuple[str, str, list[str]]]) -> list[str]:
    commands = _commands()
    problems = []
    for where, name, options in uses:
        found = commands.get(name)
        if found is None:
            problems.append(f"{where}: flightstate {name}: no such command")
            continue
        known = _options(found) | {"--help"}
        problems += [f"{where}: flightstate {name} {o}: no such option" for o in options
                     if o not in known]  # fmt: skip
    return problems


def test_every_documented_command_and_option_exists() -> None:
    uses = list(_documented_uses())
    assert len({name for _, name, _ in uses}) >= 10  # the pattern finds the documents' commands
    assert _problems(iter(uses)) == []


def test_the_check_catches_an_unknown_command_and_option() -> None:
    uses = [("x.md", "run", ["--until-idle"]), ("x.md", "restart", []),
            ("x.md", "cleanup", ["--days"])]  # fmt: skip
    assert _problems(iter(uses)) == [
        "x.md: flightstate restart: no such command",
        "x.md: flightstate cleanup --days: no such option",
    ]


def _table_commands() -> list[tuple[str, list[str]]]:
    table = section(README.read_text(encoding="utf-8"), "The `flightstate` command")
    rows = [line.split("|")[1] for line in table.splitlines() if line.startswith("| `")]
    spans = [span for row in rows for span in re.findall(r"`([^`]+)`", row)]
    return [(span.split()[0], re.findall(r"--[a-z-]+", span)) for span in spans]


def test_the_readme_table_lists_every_command_with_real_options() -> None:
    listed = _table_commands()
    assert sorted({name for name, _ in listed}) == sorted(_commands())
    assert _problems(("README.md", name, options) for name, options in listed) == []


@pytest.mark.parametrize("args", [["--help"], ["run", "--help"]])
def test_the_cli_from_a_checkout_lists_what_the_readme_documents(args: list[str]) -> None:
    done = subprocess.run([sys.executable, str(REPO_ROOT / "examples" / "runner.py"), *args],
                          capture_output=True, text=True, timeout=120, check=False,
                          cwd=REPO_ROOT)  # fmt: skip
    assert done.returncode == 0, done.stderr
    if args == ["--help"]:
        for name, _ in _table_commands():
            assert re.search(rf"^  {re.escape(name)} ", done.stdout, re.MULTILINE), name
    else:
        assert "--until-idle" in done.stdout


def test_the_deployment_guides_python_line_finds_the_shipped_unit(tmp_path: Path) -> None:
    """The one-liner docs/deployment.md uses to find the unit in the installed package."""
    guide = (REPO_ROOT / "docs" / "deployment.md").read_text(encoding="utf-8")
    (code,) = re.findall(r"python -c '([^']+)'", guide)
    env = {**os.environ, "PYTHONPATH": str(REPO_ROOT)}  # this checkout, wherever it runs
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=60, check=True, cwd=tmp_path, env=env)  # fmt: skip
    deploy = Path(done.stdout.strip())
    assert (deploy / "flightstate.service").is_file()
    assert (deploy / "flightstate.env").is_file()
