"""The engine's API: inbox rows in, processed messages out, one unit of work per call.

``process_batch`` turns rows into the work of one unit (decoding what ``prepare`` has not
decoded yet); ``process_message`` is a unit of one; ``record_dead`` a unit of one whose
decision is forced (DEAD, the pump's reason). ``ServiceProcessor`` binds them to one
store, config, clock and after-save hook: the ``MessageProcessor`` the pump runs.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from datetime import UTC, datetime

from flightstate_core.domain.config import CoreConfig
from flightstate_core.domain.decision import Decision, Outcome
from flightstate_core.domain.errors import ProtocolError
from flightstate_core.domain.messages import Message
from flightstate_core.domain.records import InboxRow, ProcessedMessage
from flightstate_core.engine.outcome import (
    PreparedRows,
    Undecodable,
    as_decoded,
    decode_row,
    prepare_rows,
    safe_envelope,
)
from flightstate_core.engine.unit_of_work import AfterSave, Failure, Work, noted, run_unit
from flightstate_core.ports import StateStore

__all__ = ["ServiceProcessor", "process_batch", "process_message", "record_dead"]


def process_batch(
    store: StateStore,
    rows: Sequence[InboxRow],
    config: CoreConfig,
    *,
    now: datetime,
    epoch: int | None,
    after_save: AfterSave | None = None,
) -> list[ProcessedMessage]:
    """Process rows in FIFO order as one unit; rows already decoded (``PreparedRows``)
    are not decoded again. A row whose decoding raises unexpectedly waits: the rows before
    it commit, then its error is raised."""
    decode = rows.decoded_row if isinstance(rows, PreparedRows) else decode_row
    work: list[Work] = []
    failure: Failure | None = None
    for row in rows:
        try:
            work.append(Work(row, decode(row, config)))
        except Exception as exc:  # an unexpected codec failure: this row waits
            failure = (row, exc)
            break
    results = run_unit(store, work, config, now=now, epoch=epoch, after_save=after_save)
    if failure is not None:
        raise noted(failure, len(results))
    return results


def process_message(
    store: StateStore,
    row: InboxRow,
    config: CoreConfig,
    *,
    now: datetime,
    epoch: int | None,
    attempts: int = 1,
    decoded: Message | Undecodable | ProtocolError | None = None,
    after_save: AfterSave | None = None,
) -> ProcessedMessage | None:
    """Process one inbox row as a unit of one; ``None`` if it was already processed.

    ``decoded`` skips decoding (a Message, or the ProtocolError decoding raised).
    LeadershipLost and store errors propagate (nothing committed).
    """
    subject = decode_row(row, config) if decoded is None else as_decoded(decoded)
    work = [Work(row, subject, attempts)]
    done = run_unit(store, work, config, now=now, epoch=epoch, after_save=after_save)
    return done[0] if done else None


def record_dead(
    store: StateStore,
    row: InboxRow,
    reason: str,
    config: CoreConfig,
    *,
    now: datetime,
    epoch: int | None,
    attempts: int,
    decoded: Message | Undecodable | None = None,
) -> ProcessedMessage | None:
    """Record a message DEAD with ``reason`` (the pump's "unexpected error N times"): a
    unit of one whose decision is forced. Nothing is applied; PROC_STATE, backfill intent
    and cursor are written. ``None`` if the message already has a PROC_STATE row."""
    subject = (
        decoded
        if decoded is not None
        else Undecodable(ProtocolError("/MSG", reason), safe_envelope(row, config))
    )
    forced = Decision(outcome=Outcome.DEAD, reason=reason)
    done = run_unit(store, [Work(row, subject, attempts, forced)], config, now=now, epoch=epoch)
    return done[0] if done else None


class ServiceProcessor:
    """The pump's ``MessageProcessor``: this engine bound to one store, config, clock and
    after-save hook (the clock is read once per call: one ``now`` per unit)."""

    def __init__(
        self,
        store: StateStore,
        config: CoreConfig,
        clock: Callable[[], datetime] = lambda: datetime.now(UTC),
        after_save: AfterSave | None = None,
    ) -> None:
        self._store = store
        self._config = config
        self._clock = clock
        self._after_save = after_save

    def prepare(self, rows: Sequence[InboxRow]) -> Sequence[InboxRow]:
        """Decode *rows* ahead of ``process_batch`` (see ``PreparedRows``)."""
        return prepare_rows(rows, self._config)

    def process_batch(
        self, rows: Sequence[InboxRow], epoch: int | None
    ) -> Sequence[ProcessedMessage]:
        """Every row in FIFO order as one unit (see ``process_batch``)."""
        return process_batch(self._store, rows, self._config, now=self._clock(), epoch=epoch,
                             after_save=self._after_save)  # fmt: skip

    def process_message(
        self, row: InboxRow, epoch: int | None, attempts: int
    ) -> ProcessedMessage | None:
        """One message as a unit of one."""
        return process_message(self._store, row, self._config, now=self._clock(), epoch=epoch,
                               attempts=attempts, after_save=self._after_save)  # fmt: skip

    def record_dead(
        self, row: InboxRow, reason: str, epoch: int | None, attempts: int
    ) -> ProcessedMessage | None:
        """The message DEAD with *reason*, nothing applied."""
        return record_dead(self._store, row, reason, self._config, now=self._clock(),
                           epoch=epoch, attempts=attempts)  # fmt: skip
