"""Delivery bookkeeping of one dispatched batch: how far the watermark may advance.

Why it is shaped like this: a row is settled only by the broker's acknowledgement — of
its own record, or of the record that coalesced it — and the watermark moves over the
*leading* settled rows only: the first unsettled row stops it, and everything after it
is read and sent again on the next attempt (at least once; the retried batch is coalesced
again, so it never publishes an older version of a FLID after a newer one).

Speed: the producer runs with ``delivery.report.only.error``, so a delivered record costs
no Python call (a report per record was ~2.5 µs, a quarter of the per-event budget). A
send is delivered when the producer holds nothing any more (``len(producer) == 0``, the
test ``flush()`` uses) and no failure report charged it. A failure report names its topic
and key, not its position (librdkafka drops the headers), so it is charged to the *first*
send of that topic and key in the batch: at or before the real one, so the watermark may
stop early (more re-sent), never late (never lost).

Parked sends (docs/design.md, "Outbox dispatch"): a send that cannot be delivered for a
permanent reason (over the record limit, checked before producing; or refused by the broker
as invalid or too large) is *parked*: it settles its rows like a delivered one (the
dispatcher records it in the store before the watermark moves past it), it is not counted
as delivered. A refusal report is charged to the first send of its topic and key whose
payload is the refused value (the first of that topic and key if none matches).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from confluent_kafka import KafkaError, Message

from flightstate_kafka._errors import refusal
from flightstate_kafka._plan import OutboxRow, Send, plan_batch

__all__ = ["BatchTracker"]


class BatchTracker:
    """Collects the delivery reports of one batch's records.

    *records* is the fetched batch (EVENT_ID order), *sends* the rows produced
    (``select_sends``), *topics* maps logical topics (MSG_EVENT.TOPIC) to the Kafka topic
    names they were produced to (identity by default).
    """

    def __init__(
        self,
        records: Sequence[OutboxRow],
        sends: Sequence[OutboxRow],
        *,
        coalesce: bool = True,
        topics: Mapping[str, str] | None = None,
    ) -> None:
        self.records = records
        self.sends = sends
        self.coalesce = coalesce
        self.topics = topics
        self.rows = len(records)
        self.last_id = records[-1].event_id if records else 0
        self.ok = 0  # successful reports
        self.bad = 0  # failed reports, plus sends produce() refused
        self.first_bad: int | None = None  # lowest send index a failure is charged to
        self.error: KafkaError | None = None  # the first failure seen
        self.parked: dict[int, str] = {}  # send index -> why it cannot be delivered
        self._first_index: dict[tuple[str, bytes | None], int] | None = None
        self._plan: list[Send] | None = None

    @property
    def plan(self) -> list[Send]:
        """The sends with the rows each one covers (computed on first use)."""
        if self._plan is None:
            self._plan = plan_batch(self.records, coalesce=self.coalesce)
        return self._plan

    def report(self, err: KafkaError | None, msg: Message) -> None:
        """The ``on_delivery`` callback of every record of the batch. The producer runs
        with ``delivery.report.only.error``: successes are counted by ``all_reported``
        (a report of a success, if any, is ignored)."""
        if err is not None:
            reason = refusal(err)
            if reason is None:
                self.fail(self._index_of(msg.topic(), msg.key()), err)
            else:
                self.park(self._refused_index(msg), f"refused by the broker: {reason}")

    def park(self, index: int, reason: str) -> None:
        """Send *index* cannot be delivered (permanent *reason*): it settles its rows."""
        self.parked.setdefault(index, reason)

    def all_reported(self) -> None:
        """The producer holds nothing more: every send without a failure was delivered."""
        self.ok = len(self.sends) - self.bad - len(self.parked)

    def _refused_index(self, msg: Message) -> int:
        """The send a refusal report is about: the first of its topic and key with the
        refused payload (the first of its topic and key if none has it)."""
        first = self._index_of(msg.topic(), msg.key())
        value = msg.value()
        for position in range(first, len(self.sends)):
            record = self.sends[position]
            if (
                record.key.encode() == msg.key()
                and record.payload == value
                and position not in self.parked
            ):
                return position
        return first

    def _index_of(self, topic: str | None, key: bytes | None) -> int:
        """The first send of the batch with this Kafka topic and key (0 if none matches)."""
        if self._first_index is None:
            names = self.topics or {}
            index: dict[tuple[str, bytes | None], int] = {}
            for position, record in enumerate(self.sends):
                ident = (names.get(record.topic, record.topic), record.key.encode())
                index.setdefault(ident, position)
            self._first_index = index
        return self._first_index.get((topic or "", key), 0)

    def fail(self, index: int, error: KafkaError, count: int = 1) -> None:
        """Record *count* failures charged to send *index* (at or before the failed ones)."""
        self.bad += count
        if self.first_bad is None or index < self.first_bad:
            self.first_bad = index
        if self.error is None:
            self.error = error

    def fail_unsent(self, start: int, error: KafkaError) -> None:
        """Sends from *start* on were refused by produce(): they will never report."""
        if start < len(self.sends):
            self.fail(start, error, len(self.sends) - start)

    @property
    def reported(self) -> int:
        """Sends that have a report (or were refused)."""
        return self.ok + self.bad

    @property
    def outstanding(self) -> int:
        """Sends still waiting for a delivery report."""
        return len(self.sends) - self.ok - self.bad - len(self.parked)

    @property
    def complete(self) -> bool:
        """Every send was delivered or parked."""
        return self.ok + len(self.parked) == len(self.sends)

    def failed(self) -> bool:
        """True once any send has failed."""
        return self.bad > 0

    def delivered_sends(self) -> Sequence[Send]:
        """Sends known to be delivered, with their covers: all (but the parked) if
        complete, else those before the first failure once every report is in, else none
        (unknown)."""
        settled = self._settled()
        if not self.parked:
            return settled
        return [s for i, s in enumerate(settled) if i not in self.parked]

    def parked_sends(self) -> list[tuple[Send, str]]:
        """The parked sends that settle rows (those before the first failure, once every
        report is in), with their reasons, in send order."""
        if not self.parked:  # the common case: no plan computed (it costs per row)
            return []
        settled = len(self._settled())
        return [(self.plan[i], self.parked[i]) for i in sorted(self.parked) if i < settled]

    def delivered_records(self) -> list[OutboxRow]:
        """The records of ``delivered_sends`` without their covers (no plan computed)."""
        if self.complete:
            upto = len(self.sends)
        elif self.outstanding or self.first_bad is None:
            upto = 0
        else:
            upto = self.first_bad
        parked = self.parked
        return [r for i, r in enumerate(self.sends[:upto]) if i not in parked]

    def _settled(self) -> Sequence[Send]:
        """Sends that settle their rows (delivered or parked): all if complete, else those
        before the first failure once every report is in, else none (unknown)."""
        if self.complete:
            return self.plan
        if self.outstanding or self.first_bad is None:
            return ()
        return self.plan[: self.first_bad]

    def row_ids(self) -> list[int]:
        """Every event id of the batch, ascending."""
        return [r.event_id for r in self.records]

    def settled_through(self) -> tuple[int, int]:
        """``(event id, rows)``: the highest id such that every row of the batch at or below
        it is settled, and how many rows that is; ``(0, 0)`` if the first row is not."""
        if self.complete:
            return self.last_id, self.rows
        settled = {i for send in self._settled() for i in send.covers}
        through, count = 0, 0
        for event_id in self.row_ids():
            if event_id not in settled:
                break
            through, count = event_id, count + 1
        return through, count
