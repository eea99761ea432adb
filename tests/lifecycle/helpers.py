"""What the lifecycle tests share (real pipeline, no mocks): their configuration, times,
one message through the service, small readers. Messages come from
``flightstate_testing.models``."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any
from zoneinfo import ZoneInfo

import psycopg

from flightstate_core.domain.config import CoreConfig
from flightstate_core.domain.decision import Outcome
from flightstate_core.domain.records import InboxRow
from flightstate_core.engine import service
from flightstate_pg import PgStore

CONFIG = CoreConfig()
NOW = datetime(2026, 11, 30, 4, 0, tzinfo=UTC)  # 12:00 in Asia/Shanghai
#: The send time (META DTTM) of every message the lifecycle tests build.
SENT = datetime(2026, 11, 20, 8, 0, tzinfo=ZoneInfo("Asia/Shanghai"))


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
