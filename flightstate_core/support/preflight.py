"""The result of one deployment check (``flightstate check``): pure values, no driver.

Each adapter package checks what it owns (the inbox's table and grants, the broker's topics,
the store's schema) and returns ``Check`` values; the runner prints them, one line each,
and exits 0 only when every one passed. A check names what it looked at, what it found,
and, when it failed, the fix an operator can apply. It never carries a secret: callers
pass redacted names (``flightstate_core.support.dsn.redact``).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from datetime import datetime, timedelta, tzinfo

from attrs import frozen

__all__ = [
    "Check",
    "all_passed",
    "failed",
    "leader_check",
    "passed",
    "schema_check",
    "skew_check",
    "zone_offset_check",
]

#: Clocks further apart than this make received-to-commit ages and lease expiry misleading.
MAX_SKEW_S = 2.0
#: Zone offsets closer than this are the same zone (offsets are whole minutes).
_SAME_OFFSET_S = 60


@frozen
class Check:
    """One line of the preflight report."""

    name: str
    ok: bool
    found: str
    fix: str = ""

    def line(self) -> str:
        """``✔ name: found`` or ``✘ name: found — fix``."""
        mark = "\u2714" if self.ok else "\u2718"
        text = f"{mark} {self.name}: {self.found}"
        return text if self.ok or not self.fix else f"{text} \u2014 {self.fix}"


def passed(name: str, found: str) -> Check:
    """A check that holds."""
    return Check(name, True, found)


def failed(name: str, found: str, fix: str) -> Check:
    """A check that does not hold, with what to do about it."""
    return Check(name, False, found, fix)


def all_passed(checks: Iterable[Check]) -> bool:
    """True when every check holds (and there is at least one)."""
    seen = list(checks)
    return bool(seen) and all(check.ok for check in seen)


def skew_check(server: str, server_utc: datetime, host_utc: datetime) -> Check:
    """The server's clock against this host's, both read as UTC at about the same moment."""
    skew = (server_utc - host_utc).total_seconds()
    name = f"{server} clock"
    found = f"{skew:+.1f} s from this host"
    if abs(skew) <= MAX_SKEW_S:
        return passed(name, found)
    return failed(name, found, f"synchronise both clocks with NTP (at most {MAX_SKEW_S:g} s apart)")


def _offset(delta: timedelta) -> str:
    minutes = round(delta.total_seconds() / 60)
    sign = "+" if minutes >= 0 else "-"
    return f"UTC{sign}{abs(minutes) // 60:02d}:{abs(minutes) % 60:02d}"


def zone_offset_check(
    name: str, server_offset: timedelta, zone: tzinfo, *, described: str, fix: str, at: datetime
) -> Check:
    """The server's wall clock against *zone* (*described*: the setting that names it), at
    instant *at* (aware); *fix* says what to change when they differ."""
    expected = at.astimezone(zone).utcoffset() or timedelta(0)
    found = f"server clock at {_offset(server_offset)}, {described} at {_offset(expected)}"
    if abs((server_offset - expected).total_seconds()) < _SAME_OFFSET_S:
        return passed(name, found)
    return failed(name, found, fix)


def schema_check(applied: Sequence[str], expected: Sequence[str]) -> Check:
    """The store's schema from its applied and the code's migration ids (both in order):
    exactly the code's, behind it (run ``migrate``), or ahead of it (a newer flightstate
    migrated it)."""
    unknown = [i for i in applied if i not in expected]
    if unknown:
        return failed("store schema", f"migrated by a newer flightstate ({', '.join(unknown)})",
                      "run the flightstate version that migrated it (or newer)")  # fmt: skip
    pending = [i for i in expected if i not in applied]
    if not pending:
        return passed("store schema", f"at {expected[-1]} ({len(expected)} migrations)")
    found = "no flightstate schema" if not applied else f"behind: {pending[0]} not applied"
    return failed("store schema", found, "run `flightstate migrate`")


def leader_check(status: tuple[int, str | None, bool] | None) -> Check:
    """Who leads, from the lease row's (EPOCH, HOLDER, unexpired): information, never a
    failure (a standby or a store nobody pumps yet is a healthy deployment)."""
    if status is None or status[1] is None:
        return passed("leader", "none yet")
    epoch, holder, unexpired = status
    state = "holds the lease" if unexpired else "held it; expired"
    return passed("leader", f"{holder} {state} (epoch {epoch})")
