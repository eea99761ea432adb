"""``requeue MESSAGE_ID``: apply a DEAD message once more, after its cause was fixed.

Why it runs the message here instead of asking the pump to: the pump reads strictly after
INBOX_CURSOR, which is already past the DEAD message, and the cursor never moves back
(GREATEST upsert). Moving it back would make the pump re-read everything after it. So the
requeue is one transaction through the ordinary service flow:

1. ``tx.lock_pipeline`` — the same row lock every pump transaction takes, so a running
   pump is simply serialised with us (no epoch: the requeue does not lead);
2. delete the message's PROC_STATE row *only if it is DEAD* (otherwise refuse and roll
   back), and write an audit row (RUNNER_REQUEUE) with the old reason and attempts;
3. the service then sees no PROC_STATE, decides and saves the message exactly as the pump
   would (business-duplicate check included), with ``attempts`` = old + 1.

Everything commits together, so the message is applied exactly once more, or not at all.
Two concurrent requeues of one id serialise on the lock; the second finds it no longer
DEAD. The outcome is then written back to the inbox row (or left to the pump's backfill).
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from datetime import UTC, datetime
from typing import Any, Final

import psycopg
from attrs import frozen

from flightstate_core.config import CoreConfig
from flightstate_core.errors import FlightstateError
from flightstate_core.messages import Message
from flightstate_core.ports import StateTransaction
from flightstate_core.records import ProcessedMessage
from flightstate_core.service import AfterSave, process_message
from flightstate_pg import PgStore
from flightstate_pg.requests import schedule_response_hook
from flightstate_runner.probes import ensure_runner_tables
from flightstate_runner.wiring import Services

__all__ = ["RequeueRefused", "RequeueResult", "requeue"]

_TAKE_DEAD: Final = (
    "DELETE FROM PROC_STATE WHERE MESSAGE_ID = %s AND STATUS = 'DEAD' RETURNING REASON, ATTEMPTS"
)
_STATUS: Final = "SELECT STATUS FROM PROC_STATE WHERE MESSAGE_ID = %s"
_AUDIT: Final = (
    "INSERT INTO RUNNER_REQUEUE (MESSAGE_ID, PREVIOUS_STATUS, PREVIOUS_REASON, PREVIOUS_ATTEMPTS)"
    " VALUES (%s, 'DEAD', %s, %s) RETURNING REQUEUE_ID"
)
_AUDIT_DONE: Final = "UPDATE RUNNER_REQUEUE SET NEW_STATUS = %s WHERE REQUEUE_ID = %s"


class RequeueRefused(FlightstateError):
    """The message is not DEAD (or not in the inbox): nothing was changed."""


@frozen
class RequeueResult:
    """What the requeue did."""

    message_id: int
    previous_reason: str | None
    previous_attempts: int
    processed: ProcessedMessage
    backfilled: bool


class _LentConnection:
    """A ``ConnectionSource`` lending one connection, so our SQL shares the store's tx."""

    def __init__(self, conn: psycopg.Connection[Any]) -> None:
        self.conn = conn

    @contextlib.contextmanager
    def connection(self) -> Iterator[psycopg.Connection[Any]]:
        yield self.conn


class _RequeueTransaction:
    """The store's transaction, plus: take the DEAD row right after the lock."""

    def __init__(self, tx: StateTransaction, conn: psycopg.Connection[Any], message_id: int):
        self._tx = tx
        self._conn = conn
        self._message_id = message_id
        self.previous: tuple[str | None, int] | None = None
        self._audit_id: int | None = None

    def __getattr__(self, name: str) -> Any:
        return getattr(self._tx, name)

    @property
    def inner(self) -> StateTransaction:
        """The store's own transaction."""
        return self._tx

    def lock_pipeline(self, epoch: int | None) -> None:
        """Lock, then delete the DEAD PROC_STATE row (refuse if it is not DEAD)."""
        self._tx.lock_pipeline(epoch)
        row = self._conn.execute(_TAKE_DEAD, (self._message_id,)).fetchone()
        if row is None:
            found = self._conn.execute(_STATUS, (self._message_id,)).fetchone()
            state = "has no outcome yet" if found is None else f"is {found[0]}"
            raise RequeueRefused(f"message {self._message_id} {state}, not DEAD")
        self.previous = (row[0], int(row[1]))
        audit = self._conn.execute(_AUDIT, (self._message_id, row[0], row[1])).fetchone()
        self._audit_id = int(audit[0]) if audit else None

    def save(self, processed: ProcessedMessage) -> None:
        """Save through the store, then complete the audit row."""
        self._tx.save(processed)
        self._conn.execute(_AUDIT_DONE, (processed.proc.status.value, self._audit_id))


class _RequeueStore:
    """A ``StateStore`` whose one transaction is a ``_RequeueTransaction``."""

    def __init__(self, store: PgStore, conn: psycopg.Connection[Any], message_id: int) -> None:
        self._store = store
        self._conn = conn
        self._message_id = message_id
        self.tx: _RequeueTransaction | None = None

    @contextlib.contextmanager
    def transaction(self) -> Iterator[_RequeueTransaction]:
        with self._store.transaction() as tx:
            self.tx = _RequeueTransaction(tx, self._conn, self._message_id)
            yield self.tx


def _after_save(config: CoreConfig) -> AfterSave:
    """The pump's after-save hook (SCHD RESP matching), on the store's own transaction."""
    hook = schedule_response_hook(config)

    def unwrapped(tx: StateTransaction, message: Message, processed: ProcessedMessage) -> None:
        hook(tx.inner if isinstance(tx, _RequeueTransaction) else tx, message, processed)

    return unwrapped


def _backfill(services: Services, processed: ProcessedMessage) -> bool:
    if processed.backfill is None:
        return True
    try:
        services.inbox.backfill([processed.backfill])
        services.store.mark_backfilled([processed.proc.message_id], datetime.now(UTC))
    except FlightstateError:
        return False  # still PENDING in PROC_STATE: the pump's backfill writes it later
    return True


def requeue(services: Services, message_id: int) -> RequeueResult:
    """Re-apply DEAD message *message_id* (see the module docstring)."""
    rows = services.inbox.read_after(message_id - 1, 1)
    if not rows or rows[0].message_id != message_id:
        raise RequeueRefused(f"message {message_id} is not in the inbox")
    ensure_runner_tables(services.pg_dsn)
    config = services.config.core()
    with psycopg.connect(services.pg_dsn, autocommit=True, connect_timeout=10) as conn:
        store = PgStore(_LentConnection(conn), config, inbox_name=services.config.inbox_table)
        wrapper = _RequeueStore(store, conn, message_id)
        processed = process_message(
            wrapper, rows[0], config, now=datetime.now(UTC), epoch=None,
            attempts=_attempts_hint(services, message_id), after_save=_after_save(config),
        )  # fmt: skip
    tx = wrapper.tx
    if processed is None or tx is None or tx.previous is None:  # cannot happen: we deleted it
        raise RequeueRefused(f"message {message_id} was not re-applied")
    reason, attempts = tx.previous
    return RequeueResult(message_id, reason, attempts, processed, _backfill(services, processed))


def _attempts_hint(services: Services, message_id: int) -> int:
    """Old ATTEMPTS + 1 (read before the transaction; only a counter for operators)."""
    with psycopg.connect(services.pg_dsn, autocommit=True, connect_timeout=10) as conn:
        row = conn.execute("SELECT ATTEMPTS FROM PROC_STATE WHERE MESSAGE_ID = %s",
                           (message_id,)).fetchone()  # fmt: skip
    return (int(row[0]) if row else 0) + 1
