"""``flightstate --version``: the installed distribution's version, or, from a source checkout
that is not installed (``python examples/runner.py``), the one its pyproject.toml declares."""

from __future__ import annotations

import tomllib
from importlib import metadata
from pathlib import Path

import click

__all__ = ["package_version", "print_version"]

_DIST = "flightstate"
_PYPROJECT = Path(__file__).resolve().parents[1] / "pyproject.toml"


def package_version() -> str:
    """``0.1.0``; ``0.1.0 (source checkout, not installed)``; ``unknown (not installed)``."""
    try:
        return metadata.version(_DIST)
    except metadata.PackageNotFoundError:
        pass
    try:
        declared = tomllib.loads(_PYPROJECT.read_text(encoding="utf-8"))["project"]["version"]
    except (OSError, KeyError, TypeError, tomllib.TOMLDecodeError):
        return "unknown (not installed)"
    return f"{declared} (source checkout, not installed)"


def print_version(ctx: click.Context, param: click.Parameter, value: bool) -> None:
    """The eager ``--version`` flag's callback: print and exit 0."""
    if value and not ctx.resilient_parsing:
        click.echo(f"flightstate {package_version()}")
        ctx.exit(0)
