"""The settings reference, docs/configuration.md, generated from ``RunnerConfig`` itself.

Name, variable, TOML key, default and range come from the attrs fields (the range from the
field's ``in_range`` validator); only the sentence saying what a setting does is written
here, in ``HELP``. A setting without a sentence, or a sentence for a setting that does not
exist, stops the generator, so the reference cannot fall behind the code
(tests/runner/test_settings_doc.py compares the committed file with the output).

    python -m flightstate_runner.settings_doc > docs/configuration.md
    python -m flightstate_runner.settings_doc --check docs/configuration.md
"""

from __future__ import annotations

import argparse
import inspect
import sys
from collections.abc import Callable, Iterator, Sequence
from datetime import time
from pathlib import Path
from typing import Any

from attrs import NOTHING, Attribute, fields

from flightstate_runner.config import ENV_PREFIX, RunnerConfig
from flightstate_runner.settings_help import GROUPS, HELP

__all__ = ["main", "render"]

COMMAND = "python -m flightstate_runner.settings_doc > docs/configuration.md"

_INTRO = f"""\
# Configuration reference

<!-- Generated from flightstate_runner/config.py by `{COMMAND}`;
     do not edit by hand (a test compares this file with the generator's output). -->

Every setting of the `flightstate` command. Each is read, in this order, the later winning:

1. its default (below);
2. the TOML file named by `--config FILE`: table `[flightstate]` (or the top level), key =
   the setting's name as written here (`gap_grace = 2.5`);
3. the environment: `FLIGHTSTATE_` + the name in capitals (`FLIGHTSTATE_GAP_GRACE=2.5`);
   an empty value counts as unset; any other `FLIGHTSTATE_*` variable (a misspelling) is
   ignored with a warning that names the nearest setting;
4. command-line options (`flightstate --help`, `flightstate run --help`), before the
   command or after it.

`flightstate config` prints each setting's value in effect and where it came from
(`--json`: one JSON document), DSN passwords redacted.

A value that does not parse or is out of its range stops the command with exit code 2 and
one line naming the setting. Every number must be finite (`nan` and `inf` are refused); a
range `(a, b]` excludes `a`. Durations are in seconds unless the name says days or hours;
sizes are in bytes. An unknown key in the TOML file is refused the same way.

DSNs are checked before anything connects and never printed: `status`, the start log and
errors show them redacted. A user name or password holding `/`, `?`, `#` or a space (and,
in a PostgreSQL DSN, `@`) must be percent-encoded (`%2F %3F %23 %20 %40`), otherwise the DSN
is refused; a raw `@` in a MySQL password is accepted (the host starts after the last `@`).

How the settings fit a site (which to set, and the service's environment file) is in
[deployment.md](deployment.md); what the alerts and the operator commands mean is in
[operations.md](operations.md).
"""


def _number(value: float) -> str:
    if float(value).is_integer():
        return f"{int(value):,}"
    return f"{value:g}"


def _range(attribute: Attribute[Any]) -> str:
    """The interval of an ``in_range`` validator, read from its closure; "" for others."""
    validator = attribute.validator
    if validator is None or "in_range" not in getattr(validator, "__qualname__", ""):
        return ""
    bounds = inspect.getclosurevars(validator).nonlocals
    left = "(" if bounds["low_open"] else "["
    return f"{left}{_number(bounds['low'])}, {_number(bounds['high'])}]"


def _default(attribute: Attribute[Any]) -> str:
    default = attribute.default
    if default is NOTHING or hasattr(default, "factory"):
        return "(computed: see the text)"
    if default is None:
        return "unset"
    if isinstance(default, time):
        return f"`{default.strftime('%H:%M')}`"
    if isinstance(default, bool):
        return f"`{str(default).lower()}`"
    if isinstance(default, int | float):
        return f"`{_number(default)}`" if default >= 1000 else f"`{default:g}`"  # noqa: PLR2004
    return f'`"{default}"`' if default == "" else f"`{default}`"


def _rows(group: Sequence[str]) -> Iterator[str]:
    by_name = {a.name: a for a in fields(RunnerConfig)}
    for name in group:
        attribute = by_name[name]
        where = f"`{name}`<br>`{ENV_PREFIX}{name.upper()}`"
        help_text = attribute.metadata.get("help") or HELP[name]
        yield f"| {where} | {_default(attribute)} | {_range(attribute)} | {help_text} |"


def _check_complete() -> None:
    names = [a.name for a in fields(RunnerConfig)]
    grouped = [name for _, members in GROUPS for name in members]
    missing = [n for n in names if n not in grouped]
    unknown = [n for n in grouped if n not in names]
    twice = sorted({n for n in grouped if grouped.count(n) > 1})
    undocumented = [n for n in names if n not in HELP]
    stale = [n for n in HELP if n not in names]
    problems = {
        "in no group of settings_help.GROUPS": missing,
        "grouped but not a setting": unknown,
        "in two groups": twice,
        "without a sentence in settings_help.HELP": undocumented,
        "described but not a setting": stale,
    }
    for what, names_found in problems.items():
        if names_found:
            raise SystemExit(f"settings_doc: {', '.join(names_found)}: {what}")


def render() -> str:
    """The whole of docs/configuration.md."""
    _check_complete()
    parts = [_INTRO]
    for title, members in GROUPS:
        parts.append(f"\n## {title}\n\n")
        parts.append("| setting and variable | default | range | what it does |\n")
        parts.append("|---|---|---|---|\n")
        parts.extend(row + "\n" for row in _rows(members))
    return "".join(parts)


def main(argv: Sequence[str] | None = None, out: Callable[[str], object] | None = None) -> int:
    """Print the reference, or with ``--check FILE`` exit 1 when FILE differs from it."""
    parser = argparse.ArgumentParser(prog="python -m flightstate_runner.settings_doc")
    parser.add_argument(
        "--check", type=Path, metavar="FILE", help="compare FILE with the output, print nothing"
    )
    args = parser.parse_args(argv)
    text = render()
    write = out or sys.stdout.write
    if args.check is None:
        write(text)
        return 0
    if args.check.read_text(encoding="utf-8") != text:
        write(f"{args.check} is not the generated reference; run: {COMMAND}\n")
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
