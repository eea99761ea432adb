"""The shared MySQL/MariaDB inbox ``cminmsgs`` as the core's ``Inbox`` port.

Quirks (MariaDB/MySQL):
- Reads run in autocommit so every poll sees rows committed since the last one (a REPEATABLE
  READ snapshot held open would hide new arrivals).
- ``datetime`` columns carry no zone. The backfill writes airport-local time (aware
  datetimes are converted to ``local_tz``). DATE_RECEIVED is stamped by the inbox's own
  clock, whose zone is the server's, not necessarily the airport's: each read also
  selects ``NOW(6)`` and a row's ``received_at`` is that much older than this host's
  clock at the read (``received_instant``); with ``received_tz`` it is wall time there.
- SUBSYSTEM_NAME/TYPE/SUBTYPE are varchar(4) and SEQUENCE a mediumint: values that do not fit
  are cut/NULLed rather than failing the backfill forever under strict mode.
- Any failed call drops the connection; the next call reconnects (the pump retries).
- The backfill connection sets ``innodb_lock_wait_timeout`` for its session (default 5 s,
  the server's default is 50): an AODB transaction holding a row lock makes one backfill
  attempt fail fast with 1205 (transient, retried on back-off) instead of hanging on the
  pump's backfill thread up to the read timeout.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any
from zoneinfo import ZoneInfo

import pymysql

from flightstate_core.domain.records import BackfillIntent, InboxRow
from flightstate_core.engine.budget import ReadBudget, ReadPlan
from flightstate_core.engine.operations import backfill_values, local_naive, received_instant
from flightstate_core.support.lazy import LazyConnection
from flightstate_mysql._errors import translated
from flightstate_mysql.dsn import parse_mysql_dsn

__all__ = ["MySqlConnection", "MySqlInbox"]

if TYPE_CHECKING:  # the driver's Connection is generic only in its type stubs
    from typing import TypeAlias

    Connection: TypeAlias = pymysql.connections.Connection[Any]

# A read is two statements (``flightstate_core.engine.budget``): ids and byte lengths of the next
# rows (no text travels), then the texts of the planned prefix; a text over the message
# limit is not sent (NULL), only its length.
_SIZES = (
    "SELECT CMINMSGS_ID, LENGTH(CMINMSGS_CLOB_MSG) FROM `{table}`"
    " WHERE CMINMSGS_ID > %s ORDER BY CMINMSGS_ID LIMIT %s"
)
# Gap look-ups (flightstate_core.domain.gaps): the ranges become one OR of BETWEENs on the
# primary key, which MySQL/MariaDB read as a set of range scans (at most 100 per query).
# They are few rows (late ones), read in one statement; a text over the message limit is
# still not sent, only its length.
_SELECT_RANGES = (
    "SELECT CMINMSGS_ID, CASE WHEN LENGTH(CMINMSGS_CLOB_MSG) <= %s THEN CMINMSGS_CLOB_MSG END,"
    " CMINMSGS_DATE_RECEIVED, LENGTH(CMINMSGS_CLOB_MSG), NOW(6) FROM `{table}`"
    " WHERE {ranges} ORDER BY CMINMSGS_ID LIMIT %s"
)
_RANGE = "CMINMSGS_ID BETWEEN %s AND %s"
_SELECT_UNPROCESSED = (
    "SELECT CMINMSGS_ID, CASE WHEN LENGTH(CMINMSGS_CLOB_MSG) <= %s THEN CMINMSGS_CLOB_MSG END,"
    " CMINMSGS_DATE_RECEIVED, LENGTH(CMINMSGS_CLOB_MSG), NOW(6) FROM `{table}`"
    " WHERE CMINMSGS_ID > %s AND CMINMSGS_ID <= %s AND CMINMSGS_DATE_PROCESSED IS NULL"
    " ORDER BY CMINMSGS_ID LIMIT %s"
)
_FETCH = (
    "SELECT CMINMSGS_ID, CASE WHEN LENGTH(CMINMSGS_CLOB_MSG) <= %s THEN CMINMSGS_CLOB_MSG END,"
    " CMINMSGS_DATE_RECEIVED, NOW(6) FROM `{table}` WHERE CMINMSGS_ID IN %s"
    " ORDER BY CMINMSGS_ID"
)
# One UPDATE for many rows: PyMySQL's executemany runs an UPDATE once per row (a round
# trip each), so the rows travel as a derived table of bound values joined on the id.
# The IN list on the key makes InnoDB reach the rows by primary key: joined without it, a
# small table is scanned and the scan waits on the row lock of any AODB transaction still
# open on a newer id (the out-of-order commits of docs/design.md, "Gaps in the inbox ids").
_BACKFILL_ROW = "SELECT %s AS P, %s AS S, %s AS N, %s AS Q, %s AS D, %s AS T, %s AS U, %s AS I"
_BACKFILL_ROW_MORE = " UNION ALL SELECT %s, %s, %s, %s, %s, %s, %s, %s"
_BACKFILL = (
    "UPDATE `{table}` t JOIN ({rows}) v ON t.CMINMSGS_ID = v.I SET"
    " t.CMINMSGS_DATE_PROCESSED = v.P, t.CMINMSGS_STATUS = v.S,"
    " t.CMINMSGS_SUBSYSTEM_NAME = v.N, t.CMINMSGS_SUBSYSTEM_SEQUENCE = v.Q,"
    " t.CMINMSGS_SUBSYSTEM_DATE_SENT = v.D, t.CMINMSGS_SUBSYSTEM_TYPE = v.T,"
    " t.CMINMSGS_SUBSYSTEM_SUBTYPE = v.U WHERE t.CMINMSGS_ID IN ({ids})"
)
_BACKFILL_CHUNK = 500
_MEDIUMINT = range(-8_388_608, 8_388_608)  # CMINMSGS_SUBSYSTEM_SEQUENCE mediumint


class MySqlConnection(LazyConnection["Connection"]):
    """One lazily opened autocommit connection to the AODB's MySQL (``cminmsgs`` and
    ``coutmsgs`` adapters): any failed call drops it, and the next call reconnects."""

    def __init__(self, dsn: str, *, connect_timeout: int, read_timeout: int,
                 lock_wait_timeout: int | None = None) -> None:  # fmt: skip
        kwargs: dict[str, Any] = parse_mysql_dsn(dsn)
        kwargs.setdefault("connect_timeout", connect_timeout)
        kwargs.setdefault("read_timeout", read_timeout)
        kwargs.setdefault("write_timeout", read_timeout)
        if lock_wait_timeout is not None:  # an int: no SQL text from outside
            wait = int(lock_wait_timeout)
            kwargs["init_command"] = f"SET SESSION innodb_lock_wait_timeout = {wait}"
        super().__init__(lambda: pymysql.connect(autocommit=True, **kwargs))


def plain_table(table: str) -> str:
    """``table`` if it is a plain name (it is put into SQL text), else ValueError."""
    if not table.replace("_", "").isalnum():
        raise ValueError(f"not a plain table name: {table!r}")
    return table


class MySqlInbox:
    """``Inbox`` over ``cminmsgs`` (FIFO by CMINMSGS_ID; backfill after our commit)."""

    def __init__(
        self,
        dsn: str,
        *,
        table: str = "cminmsgs",
        local_tz: ZoneInfo | str = "Asia/Shanghai",
        connect_timeout: int = 5,
        read_timeout: int = 60,
        lock_wait_timeout: int = 5,
        budget: ReadBudget | None = None,
        received_tz: ZoneInfo | str | None = None,
    ) -> None:
        if not 1 <= lock_wait_timeout <= 3600:  # noqa: PLR2004 - MariaDB's range is 1..1073741824
            raise ValueError(f"lock_wait_timeout: 1..3600 s, got {lock_wait_timeout!r}")
        self._table = plain_table(table)
        # Two connections: the pump reads ahead on one while it backfills on the other.
        self._reader = MySqlConnection(
            dsn, connect_timeout=connect_timeout, read_timeout=read_timeout
        )
        self._writer = MySqlConnection(
            dsn,
            connect_timeout=connect_timeout,
            read_timeout=read_timeout,
            lock_wait_timeout=lock_wait_timeout,
        )
        self._tz = local_tz if isinstance(local_tz, ZoneInfo) else ZoneInfo(local_tz)
        # None: DATE_RECEIVED is the server's clock (read with its NOW(6)); else this zone.
        self._received_tz = ZoneInfo(received_tz) if isinstance(received_tz, str) else received_tz
        self._select_unprocessed = _SELECT_UNPROCESSED.format(table=table)
        self._budget = budget or ReadBudget()
        self._sizes = _SIZES.format(table=table)
        self._fetch = _FETCH.format(table=table)

    def read_after(self, cursor: int, limit: int) -> list[InboxRow]:
        """Rows with CMINMSGS_ID > cursor in id order (at most *limit* rows and the budget's
        bytes; see ``flightstate_core.engine.budget``); never modifies one."""
        with translated("read cminmsgs"), self._reader.use() as conn, conn.cursor() as cur:
            cur.execute(self._sizes, (cursor, limit))
            plan = self._budget.plan([(int(r[0]), r[1]) for r in cur.fetchall()])
            if not plan.ids:
                return []
            read_at = datetime.now(UTC)
            cur.execute(self._fetch, (self._budget.max_message_bytes, tuple(plan.ids)))
            rows = cur.fetchall()
        return [self._row(r, plan, read_at) for r in rows]

    def _row(self, values: Sequence[Any], plan: ReadPlan, read_at: datetime) -> InboxRow:
        message_id, text, received = int(values[0]), values[1], values[2]
        size = plan.oversize.get(message_id)
        raw = "" if size is not None or text is None else _text(text)
        at = received_instant(received, self._received_tz, values[3], read_at)
        return InboxRow(message_id, raw, at, size=size)

    def read_ranges(self, ranges: Sequence[tuple[int, int]], limit: int) -> list[InboxRow]:
        """Rows whose id lies in one of the inclusive (low, high) ranges, id order."""
        if not ranges:
            return []
        where = " OR ".join([_RANGE] * len(ranges))
        query = _SELECT_RANGES.format(table=self._table, ranges=where)
        params = [bound for pair in ranges for bound in pair]
        return self._read_late("read cminmsgs gaps", query, (*params, limit))

    def read_unprocessed(self, after: int, upto: int, limit: int) -> list[InboxRow]:
        """Rows with after < id <= upto and no DATE_PROCESSED, id order (a key range scan)."""
        return self._read_late("reconcile cminmsgs", self._select_unprocessed, (after, upto, limit))

    def _read_late(self, what: str, query: str, params: Sequence[object]) -> list[InboxRow]:
        limit = self._budget.max_message_bytes
        with translated(what), self._reader.use() as conn, conn.cursor() as cur:
            read_at = datetime.now(UTC)
            cur.execute(query, (limit, *params))
            rows = cur.fetchall()
        return [_late_row(r, limit, self._received_tz, read_at) for r in rows]

    def backfill(self, intents: Sequence[BackfillIntent]) -> None:
        """Write DATE_PROCESSED, STATUS and SUBSYSTEM columns in one transaction; idempotent."""
        if not intents:
            return
        wall = _WallTexts(self._tz)
        params = [backfill_values(intent, self._tz, _MEDIUMINT, wall) for intent in intents]
        with translated("backfill cminmsgs"), self._writer.use() as conn:
            conn.begin()
            with conn.cursor() as cur:
                for start in range(0, len(params), _BACKFILL_CHUNK):
                    chunk = params[start : start + _BACKFILL_CHUNK]
                    ids = [p[-1] for p in chunk]
                    values = [v for p in chunk for v in p]
                    cur.execute(self._backfill_sql(len(chunk)), [*values, *ids])
            conn.commit()

    def _backfill_sql(self, count: int) -> str:
        rows = _BACKFILL_ROW + _BACKFILL_ROW_MORE * (count - 1)
        ids = ", ".join(["%s"] * count)
        return _BACKFILL.format(table=self._table, rows=rows, ids=ids)

    def close(self) -> None:
        """Close the connections (a later call reconnects)."""
        self._reader.close()
        self._writer.close()


class _WallTexts:
    """Times as the AODB's wall-clock text (``local_naive``, ISO with a space), memoised
    for one backfill. PyMySQL escapes a ``datetime`` field by field in Python, a third of
    the backfill's CPU when measured; MySQL reads the text into the DATETIME column exactly.

    The memo is by value: intents read back from the store are distinct objects, yet a
    batch's intents share one processing time and many share a send second. ``fold`` is
    part of the key because two times that differ only by it compare equal within their
    zone but are different instants (a DST fold), with different wall times elsewhere."""

    def __init__(self, zone: ZoneInfo) -> None:
        self._zone = zone
        self._texts: dict[tuple[datetime, int], str] = {}

    def __call__(self, value: datetime | None) -> str | None:
        if value is None:
            return None
        key = (value, value.fold)
        text = self._texts.get(key)
        if text is None:
            text = self._texts[key] = str(local_naive(value, self._zone))  # whole seconds
        return text


def _late_row(
    values: Sequence[Any], limit: int, zone: ZoneInfo | None, read_at: datetime
) -> InboxRow:
    """A row of a gap look-up; over the message limit: no text, its size (then DEAD)."""
    message_id, text, received, length = int(values[0]), values[1], values[2], values[3]
    over = length is not None and int(length) > limit
    raw = "" if over or text is None else _text(text)
    return InboxRow(
        message_id,
        raw,
        received_instant(received, zone, values[4], read_at),
        size=int(length) if over else None,
    )


def _text(value: object) -> str:
    if isinstance(value, bytes):
        return value.decode("utf-8")
    return str(value)
