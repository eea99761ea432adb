"""DDL and row helpers for the shared AODB inbox/outbox tables (docs/protocol.md §2), for
tests and demos.

In production the AODB interface owns ``cminmsgs`` and ``coutmsgs``; flightstate never
creates or drops them there. These helpers build identical tables (InnoDB, utf8mb4) in a
test or demo database, and insert raw messages the way the interface does (STATUS
``VALID``, DATE_PROCESSED NULL).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from datetime import datetime
from typing import Any
from zoneinfo import ZoneInfo

import pymysql

from flightstate_mysql._errors import translated

__all__ = [
    "CMINMSGS_DDL",
    "COUTMSGS_DDL",
    "LAB_INBOX_COMMENT",
    "create_cminmsgs",
    "create_coutmsgs",
    "insert_messages",
    "lab_inbox",
]

CMINMSGS_DDL = """
CREATE TABLE IF NOT EXISTS `{table}` (
  CMINMSGS_ID bigint NOT NULL AUTO_INCREMENT,
  CMINMSGS_CLOB_MSG mediumtext NOT NULL,
  CMINMSGS_DATE_RECEIVED datetime DEFAULT NULL,
  CMINMSGS_DATE_PROCESSED datetime DEFAULT NULL,
  CMINMSGS_SUBSYSTEM_NAME varchar(4) DEFAULT NULL,
  CMINMSGS_SUBSYSTEM_SEQUENCE mediumint DEFAULT NULL,
  CMINMSGS_SUBSYSTEM_DATE_SENT datetime DEFAULT NULL,
  CMINMSGS_SUBSYSTEM_SUBTYPE varchar(4) DEFAULT NULL,
  CMINMSGS_SUBSYSTEM_TYPE varchar(4) DEFAULT NULL,
  CMINMSGS_STATUS varchar(20) DEFAULT NULL,
  PRIMARY KEY (CMINMSGS_ID)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COMMENT='{comment}'
"""

#: The comment that marks an inbox table these helpers made: fake traffic goes only into
#: such a table, never into one the AODB interface owns (``lab_inbox``).
LAB_INBOX_COMMENT = "flightstate lab inbox"

COUTMSGS_DDL = """
CREATE TABLE IF NOT EXISTS `{table}` (
  COUTMSGS_ID bigint NOT NULL AUTO_INCREMENT,
  COUTMSGS_CLOB_MSG mediumtext,
  COUTMSGS_DATE_INSERTED datetime NOT NULL,
  COUTMSGS_DATE_SENT datetime DEFAULT NULL,
  ROUTINGID varchar(23) NOT NULL,
  COUTMSGS_TRUEFALS_GROUP tinyint NOT NULL DEFAULT 0,
  COUTMSGS_NO_MESSAGES tinyint NOT NULL DEFAULT 0,
  COUTMSGS_GROUP_ORDER tinyint NOT NULL DEFAULT 0,
  COUTMSGS_GROUP_ID tinyint NOT NULL DEFAULT 0,
  COUTMSGS_FINAL_GROUP_IND tinyint NOT NULL DEFAULT 0,
  COUTMSGS_ACK_REQD tinyint NOT NULL DEFAULT 0,
  COUTMSGS_ACK_RESEND_TIMES tinyint NOT NULL DEFAULT 0,
  COUTMSGS_ACK_DATE_RECV tinyint NOT NULL DEFAULT 0,
  COUTMSGS_ENCRYPT tinyint NOT NULL DEFAULT 0,
  COUTMSGS_ERROR tinyint NOT NULL DEFAULT 0,
  PRIMARY KEY (COUTMSGS_ID)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4
"""

_INSERT = (
    "INSERT INTO `{table}` (CMINMSGS_CLOB_MSG, CMINMSGS_DATE_RECEIVED, CMINMSGS_STATUS)"
    " VALUES (%s, %s, %s)"
)


def _check_identifier(name: str) -> str:
    if not name.replace("_", "").isalnum():
        raise ValueError(f"not a plain table name: {name!r}")
    return name


def _execute(conn: pymysql.connections.Connection[Any], ddl: str) -> None:
    with translated("create table"), conn.cursor() as cur:
        cur.execute(ddl)
    conn.commit()


def create_cminmsgs(conn: pymysql.connections.Connection[Any], table: str = "cminmsgs") -> None:
    """Create the inbox table (docs/protocol.md §2) if it does not exist."""
    _execute(conn, CMINMSGS_DDL.format(table=_check_identifier(table),
                                       comment=LAB_INBOX_COMMENT))  # fmt: skip


def lab_inbox(conn: pymysql.connections.Connection[Any], table: str = "cminmsgs") -> bool | None:
    """Whether *table* in the connection's database was made by ``create_cminmsgs`` (its
    comment says so); None when there is no such table."""
    with translated("inbox table"), conn.cursor() as cur:
        cur.execute(
            "SELECT TABLE_COMMENT FROM information_schema.TABLES"
            " WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = %s",
            (_check_identifier(table),),
        )
        found = cur.fetchone()
    return None if found is None else found[0] == LAB_INBOX_COMMENT


def create_coutmsgs(conn: pymysql.connections.Connection[Any], table: str = "coutmsgs") -> None:
    """Create the outbound table (docs/protocol.md §2) if it does not exist."""
    _execute(conn, COUTMSGS_DDL.format(table=_check_identifier(table)))


def insert_messages(
    conn: pymysql.connections.Connection[Any],
    raws: Iterable[str],
    *,
    table: str = "cminmsgs",
    received_at: datetime | None = None,
    local_tz: str | None = None,
    chunk: int = 1000,
) -> list[int]:
    """Insert raw messages in order as new VALID rows; return their CMINMSGS_IDs in order.

    Commits every *chunk* rows. ``received_at`` defaults to the server's ``NOW()`` (the
    inbox's own clock, in the server's zone, as the AODB stamps it), or with *local_tz*
    to now in that zone, read here (naive: an AODB stamping its own wall clock).
    """
    sql = _INSERT.format(table=_check_identifier(table))
    ids: list[int] = []
    batch: list[str] = []
    for raw in raws:
        batch.append(raw)
        if len(batch) >= chunk:
            ids.extend(_insert_chunk(conn, sql, batch, received_at or _local_now(local_tz)))
            batch = []
    if batch:
        ids.extend(_insert_chunk(conn, sql, batch, received_at or _local_now(local_tz)))
    return ids


def _insert_chunk(
    conn: pymysql.connections.Connection[Any],
    sql: str,
    raws: Sequence[str],
    when: datetime | None,
) -> list[int]:
    with translated("insert messages"), conn.cursor() as cur:
        if when is None:  # the server's clock; a bound value keeps the multi-row INSERT
            cur.execute("SELECT NOW()")
            when = cur.fetchone()[0]
        if _consecutive_ids(cur):
            # One multi-row INSERT; InnoDB gives a simple insert consecutive ids
            # (autoinc lock mode 0/1, increment 1), the first being LAST_INSERT_ID().
            ids: list[int] = []
            for part in _statement_parts(raws):
                cur.executemany(sql, [(raw, when, "VALID") for raw in part])
                cur.execute("SELECT LAST_INSERT_ID()")
                first = int(cur.fetchone()[0])
                ids.extend(range(first, first + len(part)))
        else:
            ids = []
            for raw in raws:
                cur.execute(sql, (raw, when, "VALID"))
                ids.append(int(cur.lastrowid))
    conn.commit()
    return ids


def _consecutive_ids(cur: Any) -> bool:
    cur.execute("SELECT @@auto_increment_increment, @@innodb_autoinc_lock_mode")
    increment, lock_mode = cur.fetchone()
    return int(increment) == 1 and int(lock_mode) in (0, 1)


def _statement_parts(raws: Sequence[str]) -> list[Sequence[str]]:
    """Split so that PyMySQL sends each part as ONE multi-row statement (its own split
    point is ``max_stmt_length``, ~1 MB), which LAST_INSERT_ID() needs."""
    parts: list[Sequence[str]] = []
    start, size = 0, 0
    for index, raw in enumerate(raws):
        length = 2 * len(raw.encode("utf-8")) + 64  # worst-case escaping
        if size and size + length > _PART_BYTES:
            parts.append(raws[start:index])
            start, size = index, 0
        size += length
    parts.append(raws[start:])
    return parts


_PART_BYTES = 900_000


def _local_now(zone: str | None) -> datetime | None:
    """Now as an AODB stamping its own wall clock in *zone* writes it (no zone, whole
    seconds); None without a zone: the server's NOW() stamps the row."""
    if zone is None:
        return None
    return datetime.now(ZoneInfo(zone)).replace(tzinfo=None, microsecond=0)
