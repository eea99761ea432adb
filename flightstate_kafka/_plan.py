"""Which outbox rows of a fetched batch become Kafka records (pure; no I/O).

Rules, numbered as the tests cite them:

1. Records are produced in EVENT_ID order (the order the pump committed them).
2. ``schd``: consecutive snapshots of one FLID in the batch collapse into the latest one;
   the record produced "covers" the skipped rows, which it settles when delivered.
3. A tombstone is never dropped: a run of snapshots that ends with a tombstone collapses
   into the tombstone, and the rows after it start a new run (a revival is published
   after the deletion, never instead of it).
4. ``msg`` rows are never coalesced: each notification is published.

Two functions, one rule set: ``select_sends`` is the hot path (which rows to produce, two
comprehensions); ``plan_batch`` also says which rows each send covers, needed only when
a batch partly failed or an observer counts rows. The tests check they agree.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import NamedTuple

from flightstate_core.ports import OutboxRow  # what the dispatcher reads of a row

__all__ = ["OutboxRow", "Send", "plan_batch", "select_sends"]


class Send(NamedTuple):
    """One Kafka record to produce and the outbox rows its delivery settles."""

    record: OutboxRow
    covers: tuple[int, ...]  # event ids settled when this record is delivered


def select_sends(records: Sequence[OutboxRow], *, coalesce: bool = True) -> list[OutboxRow]:
    """The rows to produce, in EVENT_ID order (rules 1-4): a snapshot is skipped when a
    later ``schd`` row of its key is in the batch; tombstones and ``msg`` rows never are."""
    if not coalesce:
        return list(records)
    last = {r.key: i for i, r in enumerate(records) if r.topic == "schd"}
    return [
        r
        for i, r in enumerate(records)
        if r.topic != "schd" or r.payload is None or last[r.key] == i
    ]


def plan_batch(records: Sequence[OutboxRow], *, coalesce: bool = True) -> list[Send]:
    """``select_sends`` with what each send covers (rules 1-4).

    One backward pass: a snapshot is covered by the next ``schd`` row of its key in the
    batch (snapshot or tombstone, transitively); a tombstone is always sent.
    """
    if not coalesce:
        return [Send(r, (r.event_id,)) for r in records]
    owner: dict[str, list[int]] = {}  # key -> covers of the next schd send of that key
    sends: list[tuple[OutboxRow, list[int]]] = []
    for record in reversed(records):
        if record.topic != "schd":
            sends.append((record, [record.event_id]))
            continue
        covers = owner.get(record.key)
        if covers is not None and record.payload is not None:
            covers.append(record.event_id)  # rule 2: a newer row of the run is sent
            continue
        covers = [record.event_id]  # the newest of a run, or a tombstone (rule 3)
        owner[record.key] = covers
        sends.append((record, covers))
    sends.reverse()
    return [Send(r, tuple(reversed(c))) for r, c in sends]
