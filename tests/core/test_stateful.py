"""Model-based test: random histories through ``service.process_message`` on the memory
store, checking the store's invariants after every step.

Invariants: versions are monotonic and move by exactly one per changed flight; a set
OPERATION_DAY never changes, and a stored SODT always derives the stored OPERATION_DAY;
a field the message does not carry is unchanged (no implicit clears; MAFL and the cascade
status are the core's own maintenance); no flight is deleted except by FDEL / SCHD DEL
naming it, or by the cascade of a master its MAID names that this message deleted; a
replayed row changes nothing; a resent message (same key, payload and DTTM) that already
SUCCEEDED is DUPLICATE and changes nothing, and nothing else is ever DUPLICATE: no
message that changes a value (one with another payload or another DTTM, A -> B -> A with
one SEQN included) is called a duplicate; a FLOP applies exactly what it carries, except
what a newer message set; every event matches ``wire`` and the schemas.

Ids are handed out as an AODB does: some are reserved and committed later, after higher
ids were applied (late messages, docs/design.md "Late rows and provenance"): a key whose
provenance is newer than the message keeps its value (a late revival of a flight a newer
message deleted included), every value a message changes is stamped with its id, and no
stamp ever goes down.
"""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any
from zoneinfo import ZoneInfo

from attrs import evolve
from hypothesis import HealthCheck, event, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, rule

from flightstate_core.domain.catalog import COLLECTIONS, DOCUMENTS
from flightstate_core.domain.decision import DecisionContext, Outcome
from flightstate_core.domain.handlers import decide, message_flids
from flightstate_core.domain.items import DocItem, Item
from flightstate_core.domain.messages import FlightRecord, FlopMessage, Message, ScheduleMessage
from flightstate_core.domain.opday import operation_day
from flightstate_core.domain.provenance import STATE_KEY
from flightstate_core.domain.records import InboxRow, ProcessedMessage
from flightstate_core.domain.state import FlightState
from flightstate_core.domain.values import Set
from flightstate_core.engine.service import Undecodable, process_message
from flightstate_core.memory import MemoryStore
from flightstate_testing.histories import FLID_POOL, about, messages, overtaking_pairs
from flightstate_testing.models import flop, record, schedule

from .helpers import CONFIG, NOW, check_events

Subject = Message | Undecodable
Identity = tuple[str, str, object]  # identity key, payload digest, DTTM
SET_ONLY = frozenset({"ADFT", "ADD", "UPD"})
_SENT = [datetime(2021, 1, 23, 8, 0, tzinfo=ZoneInfo("Asia/Shanghai")) + timedelta(hours=h)
         for h in (-72, 0, 1, 30)]  # fmt: skip


def records_for(message: Subject, flid: str) -> list[FlightRecord]:
    if isinstance(message, ScheduleMessage):
        return [r for r in message.records if r.flid == flid]
    if isinstance(message, FlopMessage):
        return [r for r in message.blocks if r.flid == flid]
    return []


def is_delete(message: Subject) -> bool:
    styp = getattr(getattr(message, "envelope", None), "styp", "")
    return isinstance(message, (FlopMessage, ScheduleMessage)) and styp in {"FDEL", "DEL"}


def carried(records: list[FlightRecord]) -> set[str]:
    keys: set[str] = set()
    for rec in records:
        keys |= set(rec.scalars) | set(rec.collections) | set(rec.documents)
        if rec.stand_updates:
            keys.add("PSDT")
    return keys


def fields(state: FlightState) -> dict[str, Any]:
    return {**state.scalars, **state.collections, **state.documents}


def _seq_items(state: FlightState, code: str, seq: str | None) -> list[Item]:
    return [evolve(i, ordinal=0) for i in state.collections.get(code, ()) if i.seq == seq]


def check_kept(old: FlightState, new: FlightState, message_id: int) -> None:
    """Every key a message newer than *message_id* set or cleared is as it was."""
    for key, at in old.provenance.items():
        if at <= message_id:
            continue
        code, colon, seq = key.partition(":")
        if key == STATE_KEY:
            assert new.is_deleted or not old.is_deleted, (old.flid, key)
        elif colon or (key.endswith("!") and key[:-1] in COLLECTIONS):
            code = code if colon else key[:-1]
            item_seq = seq if colon else None
            assert _seq_items(new, code, item_seq) == _seq_items(old, code, item_seq), key
        elif key in COLLECTIONS:
            assert new.collections.get(key) == old.collections.get(key), key
        elif key in DOCUMENTS:
            assert new.documents.get(key) == old.documents.get(key), key
        else:
            assert new.scalars.get(key) == old.scalars.get(key), key
    for key, at in old.provenance.items():  # stamps never go down
        assert new.provenance.get(key, 0) >= at, key
    for code in old.scalars.keys() | new.scalars.keys():  # a changed value carries its id
        if old.scalars.get(code) != new.scalars.get(code):
            assert new.provenance.get(code) == message_id, code


class History(RuleBasedStateMachine):
    """Drives the service; the store is the system, the checks are the model."""

    def __init__(self) -> None:
        super().__init__()
        self.store = MemoryStore()
        self.rows: list[tuple[InboxRow, Subject]] = []
        self.succeeded: set[Identity] = set()
        self.next_id = 1
        self.reserved: list[int] = []
        self.deciding = 0

    def _new_id(self) -> int:
        self.next_id += 1
        return self.next_id - 1

    def _send(
        self, message_id: int, message: Subject, *, late: bool = False
    ) -> ProcessedMessage | None:
        row = InboxRow(message_id, "<replayed/>", NOW, late=late)
        return process_message(self.store, row, CONFIG, now=NOW, epoch=None, decoded=message)

    def _identity(self, message: Subject) -> Identity | None:
        if isinstance(message, Undecodable):
            return None
        return message.envelope.identity_key, message.payload_digest, message.envelope.dttm

    @rule(message=messages())
    def new_message(self, message: Subject) -> None:
        self._deliver(self._new_id(), message)

    @rule()
    def reserve(self) -> None:
        """An AODB writer takes the next id and commits it later."""
        self.reserved.append(self._new_id())

    @rule(message=messages(), index=st.integers(0, 1000))
    def late_message(self, message: Subject, index: int) -> None:
        """A reserved id committed after higher ids were applied."""
        if self.reserved:
            self._deliver(self.reserved.pop(index % len(self.reserved)), message, late=True)

    @rule(flid=st.sampled_from(FLID_POOL), pair=overtaking_pairs())
    def overtaken(self, flid: str, pair: tuple[Subject, Subject]) -> None:
        """Two messages about one flight: the older id is committed after the newer one
        was applied, so the older message meets keys the newer one stamped."""
        newer, older = pair
        reserved = self._new_id()
        self._deliver(self._new_id(), about(newer, flid))
        self._deliver(reserved, about(older, flid), late=True)

    @rule(index=st.integers(0, 1000))
    def resend(self, index: int) -> None:
        if self.rows:
            self._deliver(self._new_id(), self.rows[index % len(self.rows)][1])

    @rule(index=st.integers(0, 1000), sent=st.sampled_from(_SENT))
    def same_seqn_another_time(self, index: int, sent: datetime) -> None:
        """An earlier message's key and payload sent again at another DTTM (SEQN reuse,
        earlier or later than the first): another message, applied like any other."""
        if not self.rows:
            return
        message = self.rows[index % len(self.rows)][1]
        if isinstance(message, Undecodable):
            return
        again = evolve(message, envelope=evolve(message.envelope, dttm=sent))
        self._deliver(self._new_id(), again)

    @rule(master=st.sampled_from(FLID_POOL), listed=st.sampled_from(FLID_POOL))
    def carried_mafl_then_delete(self, master: str, listed: str) -> None:
        """Upstream's MAFL for a master names any flight; deleting the master afterwards
        must still cascade only to the flights whose MAID names it."""
        mafl = (DocItem((("FLID", listed), ("CSOP", "MU"))),)
        self._deliver(self._new_id(), schedule("DNLD", record(master, documents={
            "MAFL": mafl}), seqn="9", recs=1))  # fmt: skip
        self._deliver(self._new_id(), flop("FDEL", record(master, delete=True), seqn="9"))

    @rule(index=st.integers(0, 1000))
    def replay(self, index: int) -> None:
        if not self.rows:
            return
        row, message = self.rows[index % len(self.rows)]
        flights, events = self.store.flights(), self.store.events()
        assert self._send(row.message_id, message) is None
        assert self.store.flights() == flights
        assert self.store.events() == events

    def _deliver(self, message_id: int, message: Subject, *, late: bool = False) -> None:
        before = self.store.flights()
        identity = self._identity(message)
        was_done = identity in self.succeeded
        changes = self._would_change(before, message_id, message)
        self.deciding = message_id
        result = self._send(message_id, message, late=late)
        self.rows.append((InboxRow(message_id, "<replayed/>", NOW), message))
        assert result is not None
        after = self.store.flights()
        if was_done:
            assert result.proc.status is Outcome.DUPLICATE
        else:  # only the very same message re-sent is a duplicate
            assert result.proc.status is not Outcome.DUPLICATE
        if changes:  # no message that changes a value is DUPLICATE
            assert result.proc.status is Outcome.SUCCEEDED
            assert result.states
        if result.proc.status is not Outcome.SUCCEEDED:
            assert after == before
            assert not result.events
            return
        if identity is not None:
            self.succeeded.add(identity)
        check_events(result.events, result.states)
        self._check_flights(before, after, result, message)
        for flid, new in after.items():
            if flid in before:
                check_kept(before[flid], new, message_id)

    def _would_change(
        self, before: dict[str, FlightState], message_id: int, message: Subject
    ) -> bool:
        """Would this message, were it applied now, change a flight (unless it is a
        re-send of a message that already did)?"""
        if isinstance(message, Undecodable) or self._identity(message) in self.succeeded:
            return False
        decision = decide(before, message, CONFIG, DecisionContext(message_id, NOW))
        return decision.outcome is Outcome.SUCCEEDED and bool(decision.states)

    def _check_flights(
        self,
        before: dict[str, FlightState],
        after: dict[str, FlightState],
        result: ProcessedMessage,
        message: Subject,
    ) -> None:
        assert set(before) <= set(after)
        named = set(message_flids(message)) if not isinstance(message, Undecodable) else set()
        for flid, new in after.items():
            old = before.get(flid)
            if old is None:
                assert flid in named
                assert new.version == 1
                assert flid in result.states
                continue
            if flid in result.stamped:  # a re-send: stamps raised, nothing else
                assert flid in named
                assert flid not in result.states
                assert new == evolve(old, provenance=new.provenance)
                assert new.provenance != old.provenance
                assert all(new.provenance.get(k, 0) >= v for k, v in old.provenance.items())
                event("a re-send raised stamps only")  # --hypothesis-show-statistics
                continue
            if flid not in result.states:
                assert new == old
                continue
            assert new.version == old.version + 1
            assert not new.content_equals(old)
            if old.operation_day is not None:
                assert new.operation_day == old.operation_day
            self._check_changes(old, new, message, named, before)

    def _check_changes(
        self,
        old: FlightState,
        new: FlightState,
        message: Subject,
        named: set[str],
        before: dict[str, FlightState],
    ) -> None:
        keys = carried(records_for(message, old.flid))
        old_fields, new_fields = fields(old), fields(new)
        for code in old_fields.keys() | new_fields.keys():
            if old_fields.get(code) != new_fields.get(code):
                assert code in keys or code == "MAFL", (code, old.flid)
        if isinstance(message, ScheduleMessage) and message.envelope.styp in SET_ONLY:
            assert set(old_fields) - {"MAFL"} <= set(new_fields), old.flid
        if new.is_deleted and not old.is_deleted:
            assert is_delete(message)
            if old.flid not in named:  # a cascade: only from the master its MAID names
                master = old.scalars.get("MAID")
                assert master is not None, old.flid
                assert master in named, (old.flid, master)
                assert not before[master].is_deleted
                assert self.store.flights()[master].is_deleted
        if isinstance(message, FlopMessage) and not old.is_deleted and not is_delete(message):
            newer = {key for key, at in old.provenance.items() if at > self.deciding}
            for rec in records_for(message, old.flid)[-1:]:
                for code, op in rec.scalars.items():
                    if code not in newer:
                        assert new.scalars.get(code) == (op.raw if isinstance(op, Set) else None)

    @invariant()
    def sodt_derives_operation_day(self) -> None:
        for state in self.store.flights().values():
            sodt = state.scalars.get("SODT")
            if sodt is not None:
                assert state.operation_day == operation_day(sodt, CONFIG), state.flid

    @invariant()
    def cursor_follows_rows(self) -> None:
        highest = max((row.message_id for row, _ in self.rows), default=0)
        assert (self.store.inbox_cursor() or 0) == highest


History.TestCase.settings = settings(
    max_examples=40,
    stateful_step_count=30,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
)
TestHistory = History.TestCase
