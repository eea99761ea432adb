"""What every store's transaction does the same way, whatever its SQL (docs/design.md,
"One message, one transaction" and "Leadership, fencing and bounded waits").

- PIPELINE_LOCK: the PostgreSQL and Oracle transactions take the row with their own SQL,
  but conclude the same from it: a missing row means the schema was never migrated (no
  retry helps), a stored epoch above the caller's means another leader has taken over
  since (``LeadershipLost``), and nothing is read or decided before the lock is held.
- Current states: a transaction reads a flight at most once; what it read (or learnt is
  absent) and what it wrote answers every later ``load_flights`` of the transaction.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping, MutableMapping

from flightstate_core.domain.errors import LeadershipLost, PermanentError
from flightstate_core.domain.state import FlightState

__all__ = ["check_epoch", "read_through", "require_locked"]


def check_epoch(lock_name: str, stored: int | None, epoch: int | None) -> None:
    """Judge the PIPELINE_LOCK row ``lock_name`` just locked: ``stored`` is its EPOCH (None:
    no row); ``epoch`` the caller's fence (None: no fence)."""
    if stored is None:
        raise PermanentError(f"PIPELINE_LOCK row {lock_name!r} missing: migrate first")
    if epoch is not None and stored > epoch:
        raise LeadershipLost(f"epoch {epoch} is stale: the lease is at epoch {stored}")


def require_locked(locked: bool) -> None:
    """Refuse a read or decision made before ``lock_pipeline``."""
    if not locked:
        raise PermanentError(
            "lock_pipeline() must come first: reads and decisions happen inside the lock"
        )


def read_through(
    known: MutableMapping[str, FlightState | None],
    flids: Collection[str],
    fetch: Callable[[list[str]], Mapping[str, FlightState]],
) -> dict[str, FlightState]:
    """The current states of ``flids``: ``known`` answers (None: known not to exist), the
    rest is read once with ``fetch`` and remembered, absent ones as None."""
    missing = [flid for flid in dict.fromkeys(flids) if flid not in known]
    if missing:
        found = fetch(missing)
        for flid in missing:
            known[flid] = found.get(flid)
    states = (known[flid] for flid in dict.fromkeys(flids))
    return {state.flid: state for state in states if state is not None}
