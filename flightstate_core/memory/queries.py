"""``MemoryQueries``: the operator queries (``flightstate_core.ports.OperatorQueries``) over
a ``MemoryStore``'s committed tables, for tests and the in-process runner.

Why it reads the tables directly: the memory store is the reference implementation, so
its answers come from the same rows the SQL twins count (PROC_STATE, MSG_EVENT, the
runner's heartbeat rows kept in ``MemoryWorld``). Cleanup, republish and history run the
core's driver-free parts (``engine.lifecycle``, ``engine.operations``) on a memory
transaction. The memory store keeps no schedule-request log (no ``ResponseLog``): the
request commands say so instead of pretending to have sent anything.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Sequence
from datetime import UTC, datetime, timedelta
from typing import Any

from flightstate_core.domain.config import CoreConfig
from flightstate_core.domain.decision import EventKind, OutboxEvent
from flightstate_core.domain.errors import PermanentError
from flightstate_core.domain.records import OutboxRecord
from flightstate_core.domain.state import FlightState
from flightstate_core.engine.lifecycle import (
    CleanupPlan,
    CleanupReport,
    RetentionPolicy,
    cleanup_reason,
    run_cleanup_batches,
)
from flightstate_core.engine.operations import (
    HistoryProc,
    flight_history_of,
    notice_about,
    republish_flights,
    republish_payload,
)
from flightstate_core.engine.requests import ReconcileReport, RequestStatusReport
from flightstate_core.memory._store import MemoryStore
from flightstate_core.memory.inbox import MemoryInbox
from flightstate_core.memory.transaction import MemoryTransaction
from flightstate_core.ports import InboxLagRows, Outbound

__all__ = ["MemoryQueries", "MemoryWorld"]


class MemoryWorld:
    """One named memory store with what the SQL stores keep beside it: inbox tables and
    the runner's heartbeat rows (RUNNER_HEARTBEAT)."""

    def __init__(self, inbox_name: str = "cminmsgs") -> None:
        self.store = MemoryStore(inbox_name=inbox_name)
        self.inboxes: dict[str, MemoryInbox] = {}
        self.heartbeats: dict[str, tuple[datetime, bool, str | None, str]] = {}

    def inbox(self, table: str) -> MemoryInbox:
        """The inbox table *table* (created empty on first use)."""
        return self.inboxes.setdefault(table.lower(), MemoryInbox())


def _write_events(tx: MemoryTransaction, events: Sequence[OutboxEvent], at: datetime) -> None:
    """MSG_EVENT rows of an operator write (no message: MESSAGE_ID None), in order."""
    tables = tx.tables
    for event in events:
        tables.events[tables.next_event_id] = OutboxRecord(
            tables.next_event_id, event.topic, event.key, event.payload, event.flid,
            event.state_version, None, at)  # fmt: skip
        tables.next_event_id += 1


def _republished(state: FlightState, config: CoreConfig) -> OutboxEvent:
    """The ``schd`` record that republishes *state* (a tombstone when DELETED)."""
    payload = republish_payload(state, config)
    kind = EventKind.TOMBSTONE if payload is None else EventKind.SNAPSHOT
    return OutboxEvent("schd", state.flid, None if payload is None else payload.encode(),
                       state.flid, state.version, kind)  # fmt: skip


class MemoryQueries:
    """``OperatorQueries`` on a ``MemoryWorld`` (no connection: ``close`` does nothing)."""

    def __init__(self, world: MemoryWorld, config: CoreConfig) -> None:
        self._world = world
        self._store = world.store
        self._config = config

    def outcome_counts(self) -> dict[str, int]:
        """PROC_STATE rows by STATUS."""
        counted = Counter(p.status.value for p in self._store.procs().values())
        return dict(sorted(counted.items()))

    def _dead(self) -> list[Any]:
        return sorted((p for p in self._store.procs().values() if p.status.value == "DEAD"),
                      key=lambda p: -p.message_id)  # fmt: skip

    def dead_messages(self, limit: int) -> list[dict[str, Any]]:
        """The newest DEAD messages."""
        return [{"message_id": p.message_id, "type": p.type, "styp": p.styp, "reason": p.reason,
                 "attempts": p.attempts, "processed_at": p.processed_at.isoformat()}
                for p in self._dead()[:limit]]  # fmt: skip

    def dead_by_reason(self, limit: int) -> list[dict[str, Any]]:
        """DEAD counted by reason, most frequent first."""
        counted: Counter[str | None] = Counter()
        newest: dict[str | None, int] = {}
        for proc in self._dead():
            counted[proc.reason] += 1
            newest.setdefault(proc.reason, proc.message_id)
        ranked = sorted(counted.items(), key=lambda item: (-item[1], item[0] or ""))
        return [{"reason": reason, "count": n, "newest_id": newest[reason]}
                for reason, n in ranked[:limit]]  # fmt: skip

    def pending_backfills(self) -> int:
        """PENDING write-backs."""
        return sum(1 for p in self._store.procs().values() if p.backfill_status == "PENDING")

    def failing_backfills(self) -> dict[str, Any]:
        """PENDING write-backs that failed at least once."""
        errors = self._store.backfill_errors()
        failing = [p for p in self._store.procs().values()
                   if p.backfill_status == "PENDING" and p.message_id in errors]  # fmt: skip
        newest = max(failing, key=lambda p: p.message_id, default=None)
        return {
            "failing": len(failing),
            "max_attempts": max((p.backfill_attempts for p in failing), default=None),
            "last_error": None if newest is None else errors[newest.message_id],
        }

    def outbox_counts(self) -> tuple[int, int]:
        """(MSG_EVENT rows, rows at or below the watermark)."""
        events, mark = self._store.events(), self._store.watermark()
        return len(events), sum(1 for e in events if e.event_id <= mark)

    def inbox_lag(self, table: str, after: int) -> InboxLagRows:
        """The memory inbox table past *after*."""
        rows = self._world.inbox(table).read_after(after, 10**9)
        head = rows[0] if rows else None
        received = head.received_at if head is not None else None
        age = None if received is None else (datetime.now(UTC) - received).total_seconds()
        return InboxLagRows(len(rows), head.message_id if head else None,
                            rows[-1].message_id if rows else None, received, age)  # fmt: skip

    def runner_tables_missing(self) -> list[str]:
        """None is ever missing: the world has its heartbeat rows from the start."""
        return []

    def write_heartbeat(self, holder: str, *, leader: bool, last_error: str | None,
                        stats: dict[str, Any]) -> None:  # fmt: skip
        """Upsert this holder's heartbeat."""
        text = json.dumps(stats, default=str)
        self._world.heartbeats[holder] = (datetime.now(UTC), leader, last_error, text)

    def last_heartbeat(self) -> dict[str, Any] | None:
        """The newest heartbeat, or None."""
        beats = self._world.heartbeats
        if not beats:
            return None
        holder = max(beats, key=lambda h: beats[h][0])
        at, leader, error, text = beats[holder]
        return {"holder": holder, "updated_at": at.isoformat(), "is_leader": leader,
                "last_error": error, "stats": json.loads(text)}  # fmt: skip

    def live_runners(self, fresh_s: float) -> list[dict[str, Any]]:
        """Runners that reported within *fresh_s* and did not say they stopped."""
        since = datetime.now(UTC) - timedelta(seconds=fresh_s)
        found = []
        for holder, (at, leader, _error, text) in sorted(self._world.heartbeats.items()):
            stats = json.loads(text)
            if at > since and stats.get("running") is not False:
                found.append({"holder": holder, "updated_at": at.isoformat(), "is_leader": leader,
                              "epoch": stats.get("epoch"),
                              "leader_since": stats.get("leader_since")})  # fmt: skip
        return found

    def leader_since(self, holder: str, epoch: int) -> str | None:
        """When *holder* took the lease at *epoch*, from its heartbeat."""
        beat = self._world.heartbeats.get(holder)
        stats = json.loads(beat[3]) if beat else {}
        return stats.get("leader_since") if stats.get("epoch") == epoch else None

    def run_cleanup(self, policy: RetentionPolicy, *, now: datetime, epoch: int | None = None,
                    limit: int | None = None) -> CleanupReport:  # fmt: skip
        """The core's cleanup batches; candidates are the releasable flights in FLID order."""

        def candidates(tx: MemoryTransaction, walk: str, size: int) -> tuple[list[str], str | None]:
            flights = tx.tables.flights
            found = [flid for flid in sorted(flights) if flid > walk and cleanup_reason(
                flights[flid], now, policy, self._config)][:size]  # fmt: skip
            return found, (found[-1] if found else None)

        def remove(tx: MemoryTransaction, plan: CleanupPlan, events: Sequence[OutboxEvent]) -> None:
            for flid in plan.remove:
                tx.tables.flights.pop(flid, None)
            _write_events(tx, events, now)

        return run_cleanup_batches(self._store, policy, self._config, now=now, epoch=epoch,
                                   limit=limit, start="", candidates=candidates,
                                   remove=remove)  # fmt: skip

    def request_schedule(self, outbound: Outbound, start: datetime, end: datetime, *,
                         now: datetime) -> int:  # fmt: skip
        """Refused: the memory store keeps no schedule requests."""
        raise PermanentError("request-schedule: the memory store keeps no schedule requests")

    def resend_due(self, outbound: Outbound, *, now: datetime, timeout: timedelta,
                   max_attempts: int) -> None:  # fmt: skip
        """Nothing to resend: no request was ever recorded here."""

    def reconcile_responses(self, *, now: datetime) -> ReconcileReport:
        """Nothing matched: no request was ever recorded here."""
        return ReconcileReport()

    def request_status(self, *, listed: int = 50) -> RequestStatusReport:
        """No requests (the memory store keeps none)."""
        return RequestStatusReport.of({}, 0, [])

    def republish(self, *, now: datetime, flids: Sequence[str] | None = None) -> int:
        """A fresh ``schd`` record of each current state, as the SQL twins write it."""

        def write(tx: MemoryTransaction, states: list[FlightState]) -> None:
            _write_events(tx, [_republished(state, self._config) for state in states], now)

        def page(after: str | None, size: int) -> list[str]:
            return [f for f in sorted(self._store.flights()) if f > (after or "")][:size]

        return republish_flights(self._store, list(flids) if flids else None, batch=500,
                                 epoch=None, page=page, write=write)  # fmt: skip

    def flight_history(self, flid: str) -> list[dict[str, Any]]:
        """The messages that changed *flid* (from MSG_EVENT, PROC_STATE and the snap log)."""
        events = [e for e in self._store.events() if e.flid == flid or e.topic == "msg"]
        own = [(e.message_id, e.state_version, "TOMBSTONE" if e.payload is None else "SNAPSHOT",
                e.created_at) for e in events if e.topic == "schd" and e.flid == flid]  # fmt: skip
        procs = self._store.procs()

        def notices(ids: list[int]) -> dict[int | None, dict[str, Any]]:
            bodies: dict[int | None, dict[str, Any]] = {}
            for e in events:
                body = json.loads(e.payload) if e.topic == "msg" and e.payload else None
                if body is not None and (e.message_id in ids or e.message_id is None) \
                        and notice_about(body, flid):  # fmt: skip
                    bodies[e.message_id] = body
            return bodies

        def known(ids: list[int]) -> dict[int, HistoryProc]:
            return {mid: HistoryProc.of(procs[mid]) for mid in ids if mid in procs}

        snaps = [(entry.message_id, entry.styp, at) for entry, at in self._store.snap_rows()
                 if flid in entry.flids]  # fmt: skip
        return flight_history_of(events=own, notices=notices, procs=known, snaps=snaps)

    def close(self) -> None:
        """Nothing to close."""
