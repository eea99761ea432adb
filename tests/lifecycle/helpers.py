"""Message builders and small readers shared by the lifecycle tests (real pipeline, no mocks)."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Any

import psycopg

from flightstate_core.domain.codec import encode
from flightstate_core.domain.config import CoreConfig
from flightstate_core.domain.decision import Outcome
from flightstate_core.domain.items import Item
from flightstate_core.domain.messages import Envelope, FlightRecord, FlopMessage, ScheduleMessage
from flightstate_core.domain.records import InboxRow
from flightstate_core.domain.values import Set
from flightstate_core.engine import service
from flightstate_pg import PgStore

CONFIG = CoreConfig()
NOW = datetime(2026, 11, 30, 4, 0, tzinfo=UTC)  # 12:00 in Asia/Shanghai


def fltr(flid: str, gates: Sequence[str] = (), **scalars: str) -> FlightRecord:
    """One flight record carrying these raw scalars and gates."""
    collections = {}
    if gates:
        collections["GTDT"] = tuple(Item.of(n, str(n), {"GATE": g}) for n, g in enumerate(gates, 1))
    return FlightRecord(flid, {code: Set(raw) for code, raw in scalars.items()}, collections)


def _envelope(seqn: int, mtype: str, styp: str) -> Envelope:
    return Envelope("AODB", str(seqn), "20261120080000", mtype, styp)


def schd(seqn: int, styp: str, *records: FlightRecord) -> str:
    """A SCHD message (DNLD/RESP/ADD/...) as raw XML."""
    message = ScheduleMessage(_envelope(seqn, "SCHD", styp), len(records), tuple(records))
    return encode(message).decode("utf-8")


def fdel(seqn: int, flid: str) -> str:
    """A FLOP/FDEL of one flight."""
    block = FlightRecord(flid, delete=True)
    return encode(FlopMessage(_envelope(seqn, "FLOP", "FDEL"), (block,))).decode("utf-8")


def flop(seqn: int, styp: str, flid: str, **scalars: str) -> str:
    """A FLOP block setting raw scalars."""
    block = FlightRecord(flid, {code: Set(raw) for code, raw in scalars.items()})
    return encode(FlopMessage(_envelope(seqn, styp and "FLOP", styp), (block,))).decode("utf-8")


def apply(store: PgStore, message_id: int, raw: str, now: datetime = NOW) -> None:
    """Run one message through the real service into the store; it must succeed."""
    result = service.process_message(store, InboxRow(message_id, raw), CONFIG, now=now, epoch=None)
    assert result is not None
    assert result.proc.status is Outcome.SUCCEEDED, result.proc.reason


def rows(dsn: str, query: str, *params: Any) -> list[tuple[Any, ...]]:
    """Rows of one query on its own connection."""
    with psycopg.connect(dsn) as conn:
        return conn.execute(query, params).fetchall()


def count(dsn: str, table: str, where: str = "TRUE", *params: Any) -> int:
    """COUNT(*) of a table (names are test constants)."""
    return int(rows(dsn, f"SELECT count(*) FROM {table} WHERE {where}", *params)[0][0])
