"""A cache of committed flight states, validated inside the lock before every use.

Why: the pump re-reads the flights each batch touches, and assembling a flight from ten
tables costs more than deciding it. The pipeline lock makes the pump the only writer while
it holds the lock, so a state it committed stays current until someone else writes the
row. Every writer in this package either bumps STATE_VERSION (with a new UPDATED_AT and
LAST_MESSAGE_ID) or deletes the row, or writes PROVENANCE alone (a re-send raising its
keys' stamps, "Late rows and provenance" in docs/design.md) with a text of another byte
length (``provenance.encode_raised``). So a cached state is used only when the row, read
inside the lock, still carries exactly the cached stamp, PROVENANCE's length included
(``octet_length`` reads the stored size, without detoasting); otherwise it is read again.

An edit made by hand in SQL that keeps all three stamp columns would not be seen: such
edits must bump STATE_VERSION (or the pump must be restarted). ``state_cache_size=0``
turns the cache off.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Iterable, Sequence
from datetime import datetime
from typing import Any, Final

import psycopg

from flightstate_core.domain.provenance import stored_text
from flightstate_core.domain.state import FlightState

__all__ = ["STAMPS", "StateCache"]

Stamp = tuple[int, datetime | None, int | None, int | None]
STAMPS: Final = (
    "SELECT FLID, STATE_VERSION, UPDATED_AT, LAST_MESSAGE_ID, octet_length(PROVENANCE) "
    "FROM FLIGHT_SCHD WHERE FLID = ANY(%b)"
)


def _stamp(state: FlightState) -> Stamp:
    """The stamp of a state as its row holds it (its PROVENANCE text as last written)."""
    text = stored_text(state.provenance)
    octets = None if text is None else len(text.encode())
    return (state.version, state.updated_at, state.last_message_id, octets)


class StateCache:
    """Least-recently-used committed states, at most ``size`` of them."""

    def __init__(self, size: int) -> None:
        self.size = size
        self._states: OrderedDict[str, tuple[FlightState, Stamp]] = OrderedDict()
        self.hits = 0
        self.misses = 0

    def valid(self, conn: psycopg.Connection[Any], flids: Sequence[str]) -> dict[str, FlightState]:
        """The cached states among ``flids`` whose row still has the cached stamp."""
        cached = [flid for flid in flids if flid in self._states]
        self.misses += len(flids) - len(cached)
        if not cached:
            return {}
        return self.from_stamps(cached, conn.execute(STAMPS, (cached,)).fetchall())[0]

    def from_stamps(
        self, flids: Sequence[str], rows: Iterable[Sequence[Any]]
    ) -> tuple[dict[str, FlightState], set[str]]:
        """The cached states still current among ``flids``, and the FLIDs with no row at
        all, from their stamp rows (``STAMPS`` over ``flids``)."""
        found: dict[str, FlightState] = {}
        absent = set(flids)
        for flid, version, updated, message, octets in rows:
            absent.discard(flid)
            cached = self._states.get(flid)
            if cached is not None and cached[1] == (version, updated, message, octets):
                found[flid] = cached[0]
                self._states.move_to_end(flid)
        self.hits += len(found)
        self.misses += len(flids) - len(found)
        return found, absent

    def committed(self, states: Iterable[FlightState]) -> None:
        """Remember states a transaction has just committed."""
        if self.size <= 0:
            return
        for state in states:
            self._states[state.flid] = (state, _stamp(state))
            self._states.move_to_end(state.flid)
        while len(self._states) > self.size:
            self._states.popitem(last=False)
