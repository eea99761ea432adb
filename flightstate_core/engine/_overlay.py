"""What a unit of work reads through: the overlay of current states (the store's, then the
unit's own changes) and the business-duplicate look-up over the store's history and the
unit's successes (``engine.unit_of_work``)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from datetime import datetime

from flightstate_core.domain.handlers import NamedFlids, named_flids, needed_flids
from flightstate_core.domain.messages import Message
from flightstate_core.domain.state import FlightState
from flightstate_core.ports import DuplicateKey, StateTransaction

__all__ = ["Duplicates", "FallbackDuplicates", "Overlay"]


# --------------------------------------------------------------------------- overlay


class Overlay:
    """Current states as this unit sees them: the store's, then the unit's own changes.

    ``by_master`` indexes codeshares by their MAID so finding a master's codeshares does
    not scan every state the unit holds.
    """

    def __init__(self, tx: StateTransaction) -> None:
        self.tx = tx
        self.states: dict[str, FlightState | None] = {}  # None: known not to exist
        self.by_master: dict[str, set[str]] = {}
        self.codeshares_asked: set[str] = set()
        # By identity of the message: the unit holds every message until it ends.
        self._named: dict[int, NamedFlids] = {}

    def named(self, message: Message) -> NamedFlids:
        """``named_flids(message)``, computed once per message."""
        found = self._named.get(id(message))
        if found is None:
            found = self._named[id(message)] = named_flids(message)
        return found

    def put(self, flid: str, state: FlightState | None) -> None:
        old = self.states.get(flid)
        if old is not None and (master := _master_of(old)) is not None:
            self.by_master.get(master, set()).discard(flid)
        self.states[flid] = state
        if state is not None and (master := _master_of(state)) is not None:
            self.by_master.setdefault(master, set()).add(flid)

    def ensure(self, flids: Iterable[str]) -> None:
        missing = sorted({flid for flid in flids if flid not in self.states})
        if missing:
            found = self.tx.load_flights(missing)
            for flid in missing:
                self.put(flid, found.get(flid))

    def ensure_codeshares(self, masters: Iterable[str]) -> None:
        missing = sorted(set(masters) - self.codeshares_asked)
        if missing:
            self.codeshares_asked.update(missing)
            for flid, state in self.tx.load_codeshares(missing).items():
                if flid not in self.states:  # the unit's own version is newer
                    self.put(flid, state)

    def current_for(self, message: Message) -> dict[str, FlightState]:
        """What ``decide`` needs: named flights, masters, and codeshares of named flights."""
        current: dict[str, FlightState] = {}
        asked: set[str] = set()
        named = self.named(message)
        while wanted := needed_flids(message, current, named) - asked:
            asked |= wanted
            self.ensure(wanted)
            current.update((f, s) for f in wanted if (s := self.states[f]) is not None)
        masters = named.own
        if masters:
            self.ensure_codeshares(masters)
            for master in masters:
                for flid in sorted(self.by_master.get(master, ())):
                    state = self.states[flid]
                    if state is not None:
                        current.setdefault(flid, state)
        return current


def _master_of(state: FlightState) -> str | None:
    master = state.scalars.get("MAID")
    return master if master is not None and master != state.flid else None


# --------------------------------------------------------------------------- duplicates


class Duplicates:
    """Business-duplicate look-up over the store's history and this unit's successes."""

    def __init__(self, found: Mapping[DuplicateKey, list[tuple[int, datetime | None]]]) -> None:
        self.seen: dict[DuplicateKey, list[tuple[int, datetime | None]]] = {
            key: list(pairs) for key, pairs in found.items()
        }

    def original_of(self, key: DuplicateKey, dttm: datetime) -> int | None:
        """The newest earlier success that is this very message (same key, digest, DTTM)."""
        pairs = self.seen.get(key, ())
        matches = [mid for mid, sent in pairs if sent is not None and sent == dttm]
        return max(matches) if matches else None

    def record(self, key: DuplicateKey, message_id: int, dttm: datetime | None) -> None:
        self.seen.setdefault(key, []).append((message_id, dttm))


class FallbackDuplicates(Duplicates):
    """Per-message duplicate queries, for a store without ``find_duplicates``."""

    def __init__(self, tx: StateTransaction) -> None:
        super().__init__({})
        self.tx = tx

    def original_of(self, key: DuplicateKey, dttm: datetime) -> int | None:
        in_unit = super().original_of(key, dttm)
        return in_unit if in_unit is not None else self.tx.find_duplicate(key[0], key[1], dttm)
