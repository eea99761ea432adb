"""Outbound requests into the shared ``coutmsgs`` table (docs/protocol.md §2, §9).

A transport outside flightstate sends what we insert; we only ever INSERT a row (CLOB,
DATE_INSERTED, ROUTINGID; every flag column keeps its default 0) and never update or
delete one. Quirks: ``datetime`` has no zone, so DATE_INSERTED is written as airport-local
wall time (like the AODB's own columns); ROUTINGID is varchar(23). Each insert commits on
its own (autocommit); a failed call drops the connection and the next one reconnects.
"""

from __future__ import annotations

from datetime import datetime
from typing import Final
from zoneinfo import ZoneInfo

from flightstate_core.engine.operations import local_naive
from flightstate_core.engine.requests import ROUTING_RQFD  # daily-schedule request
from flightstate_mysql._errors import translated
from flightstate_mysql.inbox import MySqlConnection, plain_table

__all__ = ["ROUTING_RQFD", "ROUTING_RQRD", "MySqlOutbound"]

ROUTING_RQRD: Final = "VIEWRQRD"  # reference-data request
_ROUTING_WIDTH: Final = 23
_INSERT: Final = (
    "INSERT INTO `{table}` (COUTMSGS_CLOB_MSG, COUTMSGS_DATE_INSERTED, ROUTINGID)"
    " VALUES (%s, %s, %s)"
)


class MySqlOutbound:
    """Inserts outbound messages into ``coutmsgs`` (one row, one commit, per ``send``)."""

    def __init__(
        self,
        dsn: str,
        *,
        table: str = "coutmsgs",
        local_tz: ZoneInfo | str = "Asia/Shanghai",
        connect_timeout: int = 5,
        read_timeout: int = 30,
    ) -> None:
        self._insert = _INSERT.format(table=plain_table(table))
        self._db = MySqlConnection(dsn, connect_timeout=connect_timeout, read_timeout=read_timeout)
        self._tz = local_tz if isinstance(local_tz, ZoneInfo) else ZoneInfo(local_tz)

    def send(self, raw: str, routing_id: str, *, at: datetime) -> int:
        """Insert one message for the transport; return its COUTMSGS_ID (committed)."""
        if not routing_id or len(routing_id) > _ROUTING_WIDTH:
            raise ValueError(f"ROUTINGID must be 1..{_ROUTING_WIDTH} characters: {routing_id!r}")
        inserted = local_naive(at, self._tz)
        with translated("insert coutmsgs"), self._db.use() as conn, conn.cursor() as cur:
            cur.execute(self._insert, (raw, inserted, routing_id))
            return int(cur.lastrowid)

    def close(self) -> None:
        """Close the connection (a later call reconnects)."""
        self._db.close()
