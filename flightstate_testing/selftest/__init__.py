"""Site acceptance: the project's contract suites on a site's own store database.

``run_suites(dsn)`` runs, in this process, every store-side contract suite CI runs
(``pg_suites``) against the given database, each test in a throwaway schema named with a
unique prefix (``plugin``), and reports each item with its time. At the end it drops
whatever carries the prefix, so the database is left as it was. The runner's
``flightstate selftest`` command adds a short end-to-end scenario through its own wiring.

PostgreSQL only so far: the Oracle suites need a schema of their own per test, which a
site's 11g account cannot create; they run from a checkout with
``FLIGHTSTATE_TEST_ORACLE_DSN`` (see ``flightstate_oracle/README.md``).
"""

from __future__ import annotations

import os
import secrets
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import pytest
from attrs import frozen

from flightstate_core.domain.errors import ConfigError

__all__ = ["SuiteItem", "SuiteReport", "run_suites"]

_SUITES = {"postgresql": "flightstate_testing.selftest.pg_suites"}
_SUITES["postgres"] = _SUITES["postgresql"]


@frozen
class SuiteItem:
    """One contract test: its suite, its name, ``passed``/``failed``/``skipped``, seconds."""

    suite: str
    name: str
    outcome: str
    seconds: float
    detail: str = ""

    def line(self) -> str:
        mark = {"passed": "\u2714", "failed": "\u2718"}.get(self.outcome, "-")
        text = f"{mark} {self.suite} {self.name} ({self.seconds:.2f} s)"
        return f"{text}: {self.detail}" if self.detail else text


@frozen
class SuiteReport:
    """Every item, the seconds of the whole run, and the schemas a crash left (dropped)."""

    items: tuple[SuiteItem, ...]
    seconds: float
    leftovers: tuple[str, ...]

    @property
    def passed(self) -> bool:
        """At least one test ran, and none failed."""
        ran = [item for item in self.items if item.outcome != "skipped"]
        return bool(ran) and all(item.outcome == "passed" for item in ran)


class _Collector:
    """A pytest plugin object: one ``SuiteItem`` per test (setup, call and teardown
    together), echoed when its teardown ends."""

    def __init__(self, echo: Callable[[str], None]) -> None:
        self.items: list[SuiteItem] = []
        self._echo = echo
        self._open: dict[str, tuple[float, str, str]] = {}

    def pytest_runtest_logreport(self, report: Any) -> None:
        seconds, outcome, detail = self._open.get(report.nodeid, (0.0, "passed", ""))
        seconds += report.duration
        if report.failed and outcome != "failed":
            outcome, detail = "failed", _first_line(report.longreprtext)
        elif report.skipped and outcome == "passed":
            outcome, detail = "skipped", _first_line(report.longreprtext)
        self._open[report.nodeid] = (seconds, outcome, detail)
        if report.when == "teardown":
            suite, _, name = report.nodeid.rpartition("::")
            item = SuiteItem(suite.rpartition("::")[2], name, outcome, seconds, detail)
            self.items.append(item)
            self._echo(item.line())


def _first_line(text: str) -> str:
    lines = [line.strip() for line in text.splitlines() if line.strip().startswith("E ")]
    return (lines[0][2:] if lines else text.strip().splitlines()[-1] if text.strip() else "")[:300]


def _module_for(dsn: str) -> str:
    scheme = dsn.partition("://")[0].lower() if "://" in dsn else "postgresql"
    try:
        return _SUITES[scheme]
    except KeyError:
        raise ConfigError(f"selftest: no contract suites for a {scheme}:// store here "
                          "(PostgreSQL only; Oracle runs from a checkout)") from None  # fmt: skip


@contextmanager
def _environment(values: dict[str, str]) -> Iterator[None]:
    before = {key: os.environ.get(key) for key in values}
    os.environ.update(values)
    try:
        yield
    finally:
        for key, value in before.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value


def run_suites(
    dsn: str, *, echo: Callable[[str], None] = print, select: str | None = None
) -> SuiteReport:
    """Run every contract suite (or those a pytest ``-k`` expression *select*s) on *dsn*'s
    database; drop what it made. A database that does not answer is TransientError, one
    line naming where."""
    from flightstate_testing.selftest import plugin  # noqa: PLC0415 - needs the pg extra

    module = _module_for(dsn)
    plugin.require_reachable(dsn)
    prefix = f"fs_selftest_{secrets.token_hex(3)}"
    collector = _Collector(echo)
    started = time.perf_counter()
    try:
        with _environment({plugin.STORE_VARIABLE: dsn, plugin.PREFIX_VARIABLE: prefix}):
            pytest.main(
                ["-c", os.devnull, "-p", "no:cacheprovider", "-p", "no:terminal",
                 "-p", "flightstate_testing.selftest.plugin", "--pyargs", module,
                 *(["-k", select] if select else [])],
                plugins=[collector],
            )  # fmt: skip
    finally:
        leftovers = plugin.drop_leftovers(dsn, prefix)
    return SuiteReport(tuple(collector.items), time.perf_counter() - started, tuple(leftovers))
