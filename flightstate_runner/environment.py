"""Unknown ``FLIGHTSTATE_*`` variables: a misspelled setting would otherwise be ignored
without a word, and the runner would run on the default (docs/configuration.md).

Variables that are not settings but are read by the project's own tools are known too: the
test suite's and the pytest plugin's (``FLIGHTSTATE_TEST_*``, ``FLIGHTSTATE_REQUIRE_SERVICES``,
``FLIGHTSTATE_CORPUS_DIR``) and the ones ``flightstate selftest`` hands its inner run
(``flightstate_testing.selftest.plugin``).
"""

from __future__ import annotations

import difflib
import logging
from collections.abc import Iterable, Mapping

import click
from attrs import fields

from flightstate_runner.config import ENV_PREFIX, RunnerConfig

__all__ = ["NOT_SETTINGS", "unknown_variables", "warn_unknown_variables"]

#: Read by the tests, the pytest plugin and ``selftest``, never by the configuration.
NOT_SETTINGS = frozenset({
    "FLIGHTSTATE_REQUIRE_SERVICES", "FLIGHTSTATE_CORPUS_DIR",
    "FLIGHTSTATE_SELFTEST_STORE_DSN", "FLIGHTSTATE_SELFTEST_PREFIX",
})  # fmt: skip
_NOT_SETTINGS_PREFIX = ENV_PREFIX + "TEST_"
_SIMILAR = 0.75  # difflib ratio of the names after the prefix: one or two letters wrong


def _settings() -> list[str]:
    return [f.name for f in fields(RunnerConfig)]


def unknown_variables(environ: Mapping[str, str] | Iterable[str]) -> list[str]:
    """One line per ``FLIGHTSTATE_*`` variable (any letter case) that is neither a setting
    nor one of ``NOT_SETTINGS``, with the nearest setting's variable when one is close."""
    settings = _settings()
    known = {ENV_PREFIX + name.upper() for name in settings} | NOT_SETTINGS
    lines = []
    for key in sorted(environ):
        if not key.upper().startswith(ENV_PREFIX) or key in known:
            continue
        if key.startswith(_NOT_SETTINGS_PREFIX):
            continue
        suffix = key[len(ENV_PREFIX) :].lower()
        near = difflib.get_close_matches(suffix, settings, n=1, cutoff=_SIMILAR)
        hint = f" (did you mean {ENV_PREFIX}{near[0].upper()}?)" if near else ""
        lines.append(f"{key} is not a flightstate setting and is ignored{hint}")
    return lines


def warn_unknown_variables(environ: Mapping[str, str], log: logging.Logger) -> None:
    """Each unknown variable: one line on stderr (seen at a terminal whatever the log level)
    and a log warning (seen where the logs are collected)."""
    for line in unknown_variables(environ):
        click.echo(f"warning: {line}", err=True)
        log.warning(line, extra={"event": "unknown_variable"})
