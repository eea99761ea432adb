"""The retry budget of the head message (docs/design.md, "A retry budget for the head
message").

A head message that keeps failing with a transient error while the store answers a health
probe is stuck on something of its own: a row lock a forgotten session holds on its flight,
a trigger that fails for that flight, a statement that always times out. Retried for ever
it holds the whole FIFO; after its budget it is recorded DEAD and ``requeue`` brings it back
once the cause is gone. An outage must never make a message DEAD, so:

- a failure counts only if it is not the store's or the session's (``TransientError.
  store_wide``: a broken connection or a read-only store says nothing about the message,
  and after an outage the pool's stale connections fail once each) and the store then
  answers its probe (``StoreHealth.ping``);
- seconds count only between two counted failures in a row: a failure that does not count
  pauses the budget (it is not reset), so an outage never spends it, and a probe failing
  now and then under load does not keep a stuck message alive for ever either;
- the budget is spent once both ``retry_budget_attempts`` counted failures and
  ``retry_budget_seconds`` counted seconds have passed: the attempts so that one slow
  failure (a 20 s statement timeout) is never the whole budget, the seconds so that fast
  failures (a 1 s deadlock) still leave time for a short-lived lock to be released;
- recording DEAD touches only PROC_STATE, the cursor and the backfill intent (under
  PIPELINE_LOCK), never the flight's rows; if even that fails transiently, the cause is
  the store's, not the message's: the budget starts over.

Without a probe (the store has no ``StoreHealth``) or with ``retry_budget_attempts`` 0
nothing is counted: the head retries for ever, as before the budget existed.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from flightstate_core.domain.errors import TransientError
from flightstate_core.ports import StoreHealth
from flightstate_core.pump.settings import PumpSettings

__all__ = ["HeadBudget", "code_label"]

_SQLSTATE = re.compile(r"[0-9A-Z]{5}")


def code_label(code: str | None) -> str:
    """How a reason names an error code: ``SQLSTATE 40P01``, ``ORA-00060``."""
    if code is None:
        return "no error code"
    return f"SQLSTATE {code}" if _SQLSTATE.fullmatch(code) else code


class HeadBudget:
    """The budget of one head message (a new one per message; see the module docstring)."""

    def __init__(
        self,
        settings: PumpSettings,
        health: StoreHealth | None,
        monotonic: Callable[[], float],
    ) -> None:
        self._settings = settings
        self._health = health
        self._monotonic = monotonic
        self.attempts = 0  # counted failures
        self.seconds = 0.0  # counted seconds
        self._last: float | None = None  # when the last failure counted (None: paused)
        self._error: TransientError | None = None

    @property
    def enabled(self) -> bool:
        """Whether a budget applies (a probe and a non-zero attempts setting)."""
        return self._health is not None and self._settings.retry_budget_attempts > 0

    def failed(self, exc: TransientError) -> bool:
        """Note one transient failure of the message; whether it counted (the store
        answered its probe). Always False without a budget."""
        if not self.enabled or exc.store_wide or not self._store_answers():
            self._last = None
            return False
        now = self._monotonic()
        if self._last is not None:
            self.seconds += max(0.0, now - self._last)
        self._last = now
        self.attempts += 1
        self._error = exc
        return True

    def spent(self) -> bool:
        """Whether the message is to be recorded DEAD now."""
        settings = self._settings
        return (
            self.enabled
            and self.attempts >= settings.retry_budget_attempts
            and self.seconds >= settings.retry_budget_seconds
        )

    def restart(self) -> None:
        """Start counting again (recording DEAD failed too: the cause is not the message)."""
        self.attempts, self.seconds, self._last = 0, 0.0, None

    def reason(self) -> str:
        """The DEAD reason: the error, its code and the counted attempts. The part before
        the first ``": "`` (the metrics' reason class) holds only the code."""
        error = self._error
        code = error.code if error is not None else None
        return (
            f"retry budget spent ({code_label(code)}): {self.attempts} attempts failed in "
            f"{self.seconds:.1f} s while the store answered its health probe; last error: "
            f"{type(error).__name__}: {error}"
        )

    def _store_answers(self) -> bool:
        health = self._health
        if health is None:
            return False
        try:
            return bool(health.ping())
        except Exception:  # a probe must not stop the pump: not answering is an outage
            return False
