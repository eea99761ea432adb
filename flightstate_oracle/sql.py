# ruff: noqa: S608 - SQL is assembled from schema.TABLES names only; every value is bound
"""Every SQL statement the Oracle backend issues, registered in ``REGISTRY``.

Why a registry: the 11g lint and the sqlglot parse test run over exactly what the code
executes. The code never builds SQL elsewhere: ``db.run``/``db.run_many``/``db.query`` take a
``Statement`` from this module (a test checks every call site). Generated statements (the main
row MERGE, one DELETE/INSERT/SELECT per detail table) are rendered once, at import, from
``schema.TABLES``.

11g rules followed here: MERGE instead of upsert syntax, sequences ``.NEXTVAL`` in INSERT (no
IDENTITY, no sequence defaults), ROWNUM over an ordered subquery instead of FETCH FIRST,
``SELECT .. FOR UPDATE WAIT n`` for PIPELINE_LOCK, TIMESTAMP WITH TIME ZONE written through
``FROM_TZ(:x, '+00:00')`` and read through ``SYS_EXTRACT_UTC``, fixed-size IN lists
(``IN_LIST_SIZE`` binds, padded with NULL) so the statement text never varies.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from types import MappingProxyType
from typing import Final

from attrs import frozen

from flightstate_core.domain.layout import DETAIL_TABLES
from flightstate_oracle._schema import TABLES, Bind, Table

__all__ = [
    "IN_LIST_SIZE",
    "MAX_SAVEPOINT_DEPTH",
    "REGISTRY",
    "Statement",
    "in_list",
    "in_list_binds",
    "register",
]

IN_LIST_SIZE: Final = 100
MAX_SAVEPOINT_DEPTH: Final = 8
LOCK_WAIT_SECONDS: Final = 30


@frozen
class Statement:
    """One SQL text and the explicit bind types its named binds need."""

    name: str
    text: str
    binds: Mapping[str, Bind]


REGISTRY: dict[str, Statement] = {}


def register(name: str, text: str, binds: Mapping[str, Bind] | None = None) -> Statement:
    """Register one statement (text normalised to single spaces) under a unique name."""
    if name in REGISTRY:
        raise ValueError(f"statement {name} registered twice")
    statement = Statement(name, " ".join(text.split()), MappingProxyType(dict(binds or {})))
    REGISTRY[name] = statement
    return statement


_stmt = register


def _typed_binds(table: Table, names: Iterable[str] | None = None) -> dict[str, Bind]:
    wanted = set(table.names if names is None else names)
    return {c.name: c.bind for c in table.columns if c.name in wanted and c.bind is not Bind.TEXT}


def _value(table: Table, name: str) -> str:
    """The bind expression writing column ``name``."""
    if table.column(name).bind is Bind.TSTZ:
        return f"FROM_TZ(:{name}, '+00:00')"
    return f":{name}"


def _select_list(table: Table, names: Iterable[str], alias: str = "") -> str:
    out = []
    for name in names:
        ref = f"{alias}{name}"
        out.append(
            f"SYS_EXTRACT_UTC({ref}) AS {name}" if table.column(name).bind is Bind.TSTZ else ref
        )
    return ", ".join(out)


def in_list_binds(prefix: str = "F") -> tuple[str, ...]:
    """Bind names of the fixed-size IN list."""
    return tuple(f"{prefix}{i}" for i in range(1, IN_LIST_SIZE + 1))


def in_list(prefix: str = "F") -> str:
    """``(:F1, .., :F100)``: the fixed-size IN list (unused binds are NULL, matching nothing)."""
    return "(" + ", ".join(f":{name}" for name in in_list_binds(prefix)) + ")"


_IN_LIST: Final = in_list()


def _merge(table: Table, key: tuple[str, ...], name: str) -> Statement:
    others = [c for c in table.names if c not in key]
    using = ", ".join(f"{_value(table, k)} AS {k}" for k in key)
    on = " AND ".join(f"t.{k} = s.{k}" for k in key)
    update = ", ".join(f"t.{c} = {_value(table, c)}" for c in others)
    columns = ", ".join(table.names)
    values = ", ".join(f"s.{c}" if c in key else _value(table, c) for c in table.names)
    text = (
        f"MERGE INTO {table.name} t USING (SELECT {using} FROM DUAL) s ON ({on}) "
        f"WHEN MATCHED THEN UPDATE SET {update} "
        f"WHEN NOT MATCHED THEN INSERT ({columns}) VALUES ({values})"
    )
    return _stmt(name, text, _typed_binds(table))


def _insert(table: Table, name: str) -> Statement:
    columns = ", ".join(table.names)
    values = ", ".join(_value(table, c) for c in table.names)
    return _stmt(
        name, f"INSERT INTO {table.name} ({columns}) VALUES ({values})", _typed_binds(table)
    )


# --------------------------------------------------------------------------- session

SESSION_SETUP: Final = _stmt(
    "session_setup",
    "ALTER SESSION SET TIME_ZONE = '+00:00' NLS_SORT = BINARY NLS_COMP = BINARY",
)
DATABASE_CHARSET: Final = _stmt(
    "database_charset",
    "SELECT VALUE FROM NLS_DATABASE_PARAMETERS WHERE PARAMETER = 'NLS_CHARACTERSET'",
)
READ_ONLY: Final = _stmt("read_only", "SET TRANSACTION READ ONLY")
#: The store's health probe (``OracleStore.ping``, the pump's retry budget).
HEALTH_PROBE: Final = _stmt("health_probe", "SELECT 1 AS ANSWER FROM DUAL")
SAVEPOINTS: Final = tuple(
    _stmt(f"savepoint_{d}", f"SAVEPOINT FS_SP_{d}") for d in range(1, MAX_SAVEPOINT_DEPTH + 1)
)
ROLLBACK_TO: Final = tuple(
    _stmt(f"rollback_to_{d}", f"ROLLBACK TO SAVEPOINT FS_SP_{d}")
    for d in range(1, MAX_SAVEPOINT_DEPTH + 1)
)

# --------------------------------------------------------------------------- PIPELINE_LOCK

LOCK_SELECT: Final = _stmt(
    "lock_select",
    "SELECT EPOCH FROM PIPELINE_LOCK WHERE LOCK_NAME = :LOCK_NAME "
    f"FOR UPDATE WAIT {LOCK_WAIT_SECONDS}",
)
LOCK_SEED: Final = _stmt(
    "lock_seed",
    "MERGE INTO PIPELINE_LOCK l USING (SELECT :LOCK_NAME AS LOCK_NAME FROM DUAL) s "
    "ON (l.LOCK_NAME = s.LOCK_NAME) WHEN NOT MATCHED THEN "
    "INSERT (LOCK_NAME, EPOCH, UPDATED_AT) VALUES (s.LOCK_NAME, 0, SYSTIMESTAMP)",
)
# Take over (bump EPOCH) when free/expired/released, renew (same EPOCH) for the holder.
LEASE_ACQUIRE: Final = _stmt(
    "lease_acquire",
    """MERGE INTO PIPELINE_LOCK l
    USING (SELECT :LOCK_NAME AS LOCK_NAME, :HOLDER AS HOLDER FROM DUAL) s
    ON (l.LOCK_NAME = s.LOCK_NAME)
    WHEN MATCHED THEN UPDATE SET
      l.EPOCH = CASE WHEN l.HOLDER = s.HOLDER THEN l.EPOCH ELSE l.EPOCH + 1 END,
      l.HOLDER = s.HOLDER,
      l.LEASE_EXPIRES_AT = SYSTIMESTAMP + NUMTODSINTERVAL(:TTL_SECONDS, 'SECOND'),
      l.UPDATED_AT = SYSTIMESTAMP
      WHERE l.HOLDER = s.HOLDER OR l.HOLDER IS NULL OR l.LEASE_EXPIRES_AT IS NULL
         OR l.LEASE_EXPIRES_AT <= SYSTIMESTAMP
    WHEN NOT MATCHED THEN INSERT (LOCK_NAME, EPOCH, HOLDER, LEASE_EXPIRES_AT, UPDATED_AT)
      VALUES (s.LOCK_NAME, 1, s.HOLDER,
              SYSTIMESTAMP + NUMTODSINTERVAL(:TTL_SECONDS, 'SECOND'), SYSTIMESTAMP)""",
    {"TTL_SECONDS": Bind.NUMBER},
)
LEASE_STATUS: Final = _stmt(
    "lease_status",
    "SELECT EPOCH, HOLDER, CASE WHEN LEASE_EXPIRES_AT > SYSTIMESTAMP THEN 1 ELSE 0 END "
    "AS UNEXPIRED "
    "FROM PIPELINE_LOCK WHERE LOCK_NAME = :LOCK_NAME",
)
LEASE_RELEASE: Final = _stmt(
    "lease_release",
    "UPDATE PIPELINE_LOCK SET HOLDER = NULL, LEASE_EXPIRES_AT = SYSTIMESTAMP, "
    "UPDATED_AT = SYSTIMESTAMP WHERE LOCK_NAME = :LOCK_NAME AND HOLDER = :HOLDER",
)

# --------------------------------------------------------------------------- PROC_STATE

_PROC = TABLES["PROC_STATE"]
PROC_SELECT: Final = _stmt(
    "proc_select",
    f"SELECT {_select_list(_PROC, _PROC.names)} FROM PROC_STATE WHERE MESSAGE_ID = :MESSAGE_ID",
)
# A plain INSERT: a replayed message id is refused by the primary key (review F7).
PROC_INSERT: Final = _insert(_PROC, "proc_insert")
PROC_DUPLICATE: Final = _stmt(
    "proc_duplicate",
    """SELECT MESSAGE_ID FROM (
      SELECT MESSAGE_ID FROM PROC_STATE
      WHERE IDENTITY_KEY = :IDENTITY_KEY AND PAYLOAD_DIGEST = :PAYLOAD_DIGEST
        AND STATUS = 'SUCCEEDED' AND DTTM = FROM_TZ(:DTTM, '+00:00')
      ORDER BY MESSAGE_ID DESC) WHERE ROWNUM <= 1""",
    {"DTTM": Bind.TSTZ},
)
# Batch reads (flightstate_core.engine.unit_of_work): fixed-size IN lists, chunked by the caller.
# Why not a collection bind or a temporary table: see ``transaction.OracleTransaction``.
PROC_IDS: Final = _stmt(
    "proc_ids",
    f"SELECT MESSAGE_ID FROM PROC_STATE WHERE MESSAGE_ID IN {in_list('M')}",
    dict.fromkeys(in_list_binds("M"), Bind.NUMBER),
)
VERSION_FLOORS: Final = _stmt(
    "version_floors",
    "SELECT FLID, MAX(STATE_VERSION) AS STATE_VERSION FROM FLIGHT_SCHD_HIST "
    f"WHERE FLID IN {in_list('F')} GROUP BY FLID",
    dict.fromkeys(in_list_binds("F"), Bind.TEXT),
)
_PAIRS = ", ".join(f"(:K{i}, :D{i})" for i in range(1, IN_LIST_SIZE + 1))
PROC_DUPLICATES: Final = _stmt(
    "proc_duplicates",
    "SELECT IDENTITY_KEY, PAYLOAD_DIGEST, MESSAGE_ID, SYS_EXTRACT_UTC(DTTM) AS DTTM "
    "FROM PROC_STATE WHERE STATUS = 'SUCCEEDED' "
    f"AND (IDENTITY_KEY, PAYLOAD_DIGEST) IN ({_PAIRS})",
)
_PENDING = "CASE WHEN BACKFILL_STATUS = 'PENDING' THEN MESSAGE_ID END"  # = PROC_STATE_BF_IX
BACKFILL_PENDING: Final = _stmt(
    "backfill_pending",
    f"""SELECT * FROM (
      SELECT {_select_list(_PROC, _PROC.names)} FROM PROC_STATE
      WHERE {_PENDING} IS NOT NULL ORDER BY {_PENDING}) WHERE ROWNUM <= :MAX_ROWS""",
    {"MAX_ROWS": Bind.NUMBER},
)
BACKFILL_DONE: Final = _stmt(
    "backfill_done",
    "UPDATE PROC_STATE SET BACKFILL_STATUS = 'DONE', BACKFILL_AT = FROM_TZ(:DONE_AT, '+00:00'), "
    "BACKFILL_ERROR = NULL WHERE MESSAGE_ID = :MESSAGE_ID",
    {"DONE_AT": Bind.TSTZ, "MESSAGE_ID": Bind.NUMBER},
)
BACKFILL_FAILED: Final = _stmt(
    "backfill_failed",
    "UPDATE PROC_STATE SET BACKFILL_ATTEMPTS = BACKFILL_ATTEMPTS + 1, "
    "BACKFILL_ERROR = :BACKFILL_ERROR WHERE MESSAGE_ID = :MESSAGE_ID",
    {"MESSAGE_ID": Bind.NUMBER},
)

# --------------------------------------------------------------------------- flights

_MAIN = TABLES["FLIGHT_SCHD"]
_MAIN_READ = tuple(name for name in _MAIN.names if not name.endswith(("_TS", "_DT", "_MIN")))
FLIGHT_SELECT: Final = _stmt(
    "flight_select",
    f"SELECT {_select_list(_MAIN, _MAIN_READ)} FROM FLIGHT_SCHD WHERE FLID IN {_IN_LIST}",
)
FLIGHT_MERGE: Final = _merge(_MAIN, ("FLID",), "flight_merge")
#: A re-send raised stamps without changing content: PROVENANCE alone, no version, no
#: UPDATED_AT ("Late rows and provenance" in docs/design.md).
FLIGHT_STAMPS: Final = _stmt(
    "flight_stamps",
    "UPDATE FLIGHT_SCHD SET PROVENANCE = :PROVENANCE WHERE FLID = :FLID",
    _typed_binds(_MAIN, ("PROVENANCE",)),
)
CODESHARE_SELECT: Final = _stmt(
    "codeshare_select", f"SELECT FLID FROM FLIGHT_SCHD WHERE MAID IN {_IN_LIST} ORDER BY FLID"
)
PAGE_FIRST: Final = _stmt(
    "page_first",
    "SELECT FLID FROM (SELECT FLID FROM FLIGHT_SCHD ORDER BY FLID) WHERE ROWNUM <= :MAX_ROWS",
    {"MAX_ROWS": Bind.NUMBER},
)
PAGE_NEXT: Final = _stmt(
    "page_next",
    "SELECT FLID FROM (SELECT FLID FROM FLIGHT_SCHD WHERE FLID > :AFTER_FLID ORDER BY FLID) "
    "WHERE ROWNUM <= :MAX_ROWS",
    {"MAX_ROWS": Bind.NUMBER},
)


def _detail_read(table: Table) -> tuple[str, ...]:
    return tuple(name for name in table.names if not name.endswith(("_TS", "_DT", "_MIN")))


DETAIL_SELECT: Final[Mapping[str, Statement]] = MappingProxyType(
    {
        name: _stmt(
            f"detail_select.{name}",
            f"SELECT {', '.join(_detail_read(TABLES[name]))} FROM {name} "
            f"WHERE FLID IN {_IN_LIST} ORDER BY {', '.join(TABLES[name].primary_key)}",
        )
        for name in DETAIL_TABLES
    }
)
DETAIL_DELETE: Final[Mapping[str, Statement]] = MappingProxyType(
    {
        name: _stmt(f"detail_delete.{name}", f"DELETE FROM {name} WHERE FLID = :FLID")
        for name in DETAIL_TABLES
    }
)
DETAIL_INSERT: Final[Mapping[str, Statement]] = MappingProxyType(
    {name: _insert(TABLES[name], f"detail_insert.{name}") for name in DETAIL_TABLES}
)

# --------------------------------------------------------------------------- MSG_EVENT

_EVENT = TABLES["MSG_EVENT"]
EVENT_INSERT: Final = _stmt(
    "event_insert",
    "INSERT INTO MSG_EVENT (EVENT_ID, TOPIC, EVENT_KEY, PAYLOAD, FLID, STATE_VERSION, KIND, "
    "MESSAGE_ID, CREATED_AT, EMPTY_CODES) VALUES (MSG_EVENT_SEQ.NEXTVAL, :TOPIC, :EVENT_KEY, "
    ":PAYLOAD, :FLID, :STATE_VERSION, :KIND, :MESSAGE_ID, SYSTIMESTAMP, :EMPTY_CODES)",
    _typed_binds(_EVENT, ("PAYLOAD", "STATE_VERSION", "MESSAGE_ID")),
)
# Outbox (migration 0004): a dispatch watermark per outbox; DISPATCHED_AT is legacy (read,
# never written: rows the pre-0004 dispatcher marked above the watermark are skipped).
_WATERMARK = "(SELECT LAST_EVENT_ID FROM OUTBOX_WATERMARK WHERE OUTBOX_NAME = :OUTBOX_NAME)"
WATERMARK_SELECT: Final = _stmt(
    "watermark_select",
    "SELECT LAST_EVENT_ID FROM OUTBOX_WATERMARK WHERE OUTBOX_NAME = :OUTBOX_NAME",
)
# GREATEST is NULL when the watermark row is missing: nothing is read, never everything.
EVENT_UNDELIVERED: Final = _stmt(
    "event_undelivered",
    f"""SELECT * FROM (
      SELECT EVENT_ID, TOPIC, EVENT_KEY, PAYLOAD, FLID, STATE_VERSION, KIND, MESSAGE_ID,
             SYS_EXTRACT_UTC(CREATED_AT) AS CREATED_AT, EMPTY_CODES
      FROM MSG_EVENT WHERE EVENT_ID > GREATEST(:AFTER_EVENT_ID, {_WATERMARK})
        AND DISPATCHED_AT IS NULL ORDER BY EVENT_ID)
    WHERE ROWNUM <= :MAX_ROWS""",
    {"AFTER_EVENT_ID": Bind.NUMBER, "MAX_ROWS": Bind.NUMBER},
)
# Monotonic: a watermark never goes back (two dispatchers may race; both only advance).
WATERMARK_ADVANCE: Final = _stmt(
    "watermark_advance",
    "UPDATE OUTBOX_WATERMARK SET LAST_EVENT_ID = :THROUGH_ID, "
    "UPDATED_AT = FROM_TZ(:UPDATED_AT, '+00:00') "
    "WHERE OUTBOX_NAME = :OUTBOX_NAME AND LAST_EVENT_ID < :THROUGH_ID",
    {"THROUGH_ID": Bind.NUMBER, "UPDATED_AT": Bind.TSTZ},
)
EVENT_UNDELIVERED_IDS: Final = _stmt(
    "event_undelivered_ids",
    "SELECT EVENT_ID FROM MSG_EVENT WHERE EVENT_ID > :AFTER_EVENT_ID "
    "AND EVENT_ID <= :THROUGH_ID AND DISPATCHED_AT IS NULL ORDER BY EVENT_ID",
    {"AFTER_EVENT_ID": Bind.NUMBER, "THROUGH_ID": Bind.NUMBER},
)
# Bounded, oldest ids first, only delivered rows (at or below the watermark).
EVENT_PURGE: Final = _stmt(
    "event_purge",
    f"""DELETE FROM MSG_EVENT WHERE EVENT_ID IN (
      SELECT EVENT_ID FROM (
        SELECT EVENT_ID FROM MSG_EVENT WHERE EVENT_ID <= {_WATERMARK}
          AND CREATED_AT < FROM_TZ(:OLDER_THAN, '+00:00') ORDER BY EVENT_ID)
      WHERE ROWNUM <= :MAX_ROWS)""",
    {"OLDER_THAN": Bind.TSTZ, "MAX_ROWS": Bind.NUMBER},
)
OUTBOX_BACKLOG: Final = _stmt(
    "outbox_backlog",
    "SELECT w.LAST_EVENT_ID, COUNT(e.EVENT_ID) AS N, "
    "SYSTIMESTAMP - MIN(e.CREATED_AT) AS OLDEST_AGE FROM OUTBOX_WATERMARK w "
    "LEFT JOIN MSG_EVENT e ON e.EVENT_ID > w.LAST_EVENT_ID AND e.DISPATCHED_AT IS NULL "
    "WHERE w.OUTBOX_NAME = :OUTBOX_NAME GROUP BY w.LAST_EVENT_ID",
)
# Parked events (migration 0006): a row parked again by a retried window is kept as is.
PARKED_INSERT: Final = _stmt(
    "parked_insert",
    """INSERT INTO OUTBOX_PARKED (EVENT_ID, FLID, TOPIC, STATE_VERSION, SIZE_BYTES, REASON,
      PARKED_AT)
    SELECT :EVENT_ID, :FLID, :TOPIC, :STATE_VERSION, :SIZE_BYTES, :REASON,
      FROM_TZ(:PARKED_AT, '+00:00') FROM DUAL
    WHERE NOT EXISTS (SELECT 1 FROM OUTBOX_PARKED WHERE EVENT_ID = :EVENT_ID)""",
    {
        "EVENT_ID": Bind.NUMBER,
        "STATE_VERSION": Bind.NUMBER,
        "SIZE_BYTES": Bind.NUMBER,
        "PARKED_AT": Bind.TSTZ,
    },
)
PARKED_SELECT: Final = _stmt(
    "parked_select",
    """SELECT * FROM (
      SELECT EVENT_ID, FLID, TOPIC, STATE_VERSION, SIZE_BYTES, REASON,
             SYS_EXTRACT_UTC(PARKED_AT) AS PARKED_AT
      FROM OUTBOX_PARKED WHERE RESOLVED_AT IS NULL ORDER BY EVENT_ID)
    WHERE ROWNUM <= :MAX_ROWS""",
    {"MAX_ROWS": Bind.NUMBER},
)
PARKED_COUNT: Final = _stmt(
    "parked_count", "SELECT COUNT(*) AS N FROM OUTBOX_PARKED WHERE RESOLVED_AT IS NULL"
)
PARKED_RESOLVE: Final = _stmt(
    "parked_resolve",
    "UPDATE OUTBOX_PARKED SET RESOLVED_AT = FROM_TZ(:RESOLVED_AT, '+00:00') "
    "WHERE FLID = :FLID AND EVENT_ID < :BEFORE_ID AND RESOLVED_AT IS NULL",
    {"RESOLVED_AT": Bind.TSTZ, "BEFORE_ID": Bind.NUMBER},
)

# --------------------------------------------------------------------------- cursor, snap log

# The cursor only moves forward (GREATEST), as in flightstate_pg.
CURSOR_MERGE: Final = _stmt(
    "cursor_merge",
    """MERGE INTO INBOX_CURSOR t
    USING (SELECT :INBOX_NAME AS INBOX_NAME, :LAST_MESSAGE_ID AS LAST_MESSAGE_ID FROM DUAL) s
    ON (t.INBOX_NAME = s.INBOX_NAME)
    WHEN MATCHED THEN UPDATE SET
      t.LAST_MESSAGE_ID = GREATEST(t.LAST_MESSAGE_ID, s.LAST_MESSAGE_ID),
      t.UPDATED_AT = SYSTIMESTAMP
    WHEN NOT MATCHED THEN INSERT (INBOX_NAME, LAST_MESSAGE_ID, UPDATED_AT)
      VALUES (s.INBOX_NAME, s.LAST_MESSAGE_ID, SYSTIMESTAMP)""",
    {"LAST_MESSAGE_ID": Bind.NUMBER},
)
# Open inbox gaps (flightstate_core.domain.gaps): few rows per inbox, replaced as a whole.
GAPS_SELECT: Final = _stmt(
    "gaps_select",
    "SELECT LOW_ID, HIGH_ID, SYS_EXTRACT_UTC(FIRST_SEEN_AT) AS FIRST_SEEN_AT FROM INBOX_GAP "
    "WHERE INBOX_NAME = :INBOX_NAME ORDER BY LOW_ID",
)
GAPS_DELETE: Final = _stmt("gaps_delete", "DELETE FROM INBOX_GAP WHERE INBOX_NAME = :INBOX_NAME")
GAP_INSERT: Final = _stmt(
    "gap_insert",
    "INSERT INTO INBOX_GAP (INBOX_NAME, LOW_ID, HIGH_ID, FIRST_SEEN_AT) "
    "VALUES (:INBOX_NAME, :LOW_ID, :HIGH_ID, FROM_TZ(:FIRST_SEEN_AT, '+00:00'))",
    {"LOW_ID": Bind.NUMBER, "HIGH_ID": Bind.NUMBER, "FIRST_SEEN_AT": Bind.TSTZ},
)
GAPS_ABANDON: Final = _stmt(
    "gaps_abandon",
    "DELETE FROM INBOX_GAP WHERE INBOX_NAME = :INBOX_NAME "
    "AND FIRST_SEEN_AT < FROM_TZ(:SEEN_BEFORE, '+00:00')",
    {"SEEN_BEFORE": Bind.TSTZ},
)
GAPS_ABANDONED_SELECT: Final = _stmt(
    "gaps_abandoned_select",
    "SELECT LOW_ID, HIGH_ID, SYS_EXTRACT_UTC(FIRST_SEEN_AT) AS FIRST_SEEN_AT FROM INBOX_GAP "
    "WHERE INBOX_NAME = :INBOX_NAME AND FIRST_SEEN_AT < FROM_TZ(:SEEN_BEFORE, '+00:00') "
    "ORDER BY LOW_ID",
    {"SEEN_BEFORE": Bind.TSTZ},
)
GAPS_ABANDONED_COUNT: Final = _stmt(
    "gaps_abandoned_count",
    "UPDATE INBOX_CURSOR SET GAPS_ABANDONED = GAPS_ABANDONED + :CLOSED "
    "WHERE INBOX_NAME = :INBOX_NAME",
    {"CLOSED": Bind.NUMBER},
)
LATE_COUNT: Final = _stmt(
    "late_count",
    "UPDATE INBOX_CURSOR SET LATE_ROWS = LATE_ROWS + :LATE WHERE INBOX_NAME = :INBOX_NAME",
    {"LATE": Bind.NUMBER},
)
GAP_COUNTERS: Final = _stmt(
    "gap_counters",
    "SELECT LATE_ROWS, GAPS_ABANDONED FROM INBOX_CURSOR WHERE INBOX_NAME = :INBOX_NAME",
)
CURSOR_SELECT: Final = _stmt(
    "cursor_select", "SELECT LAST_MESSAGE_ID FROM INBOX_CURSOR WHERE INBOX_NAME = :INBOX_NAME"
)
SNAP_INSERT: Final = _stmt(
    "snap_insert",
    "INSERT INTO SCHD_SNAP_LOG (SNAP_ID, MESSAGE_ID, STYP, RECORD_COUNT, FLIDS, "
    "OPERATION_DAYS, CREATED_AT) VALUES (SCHD_SNAP_LOG_SEQ.NEXTVAL, :MESSAGE_ID, :STYP, "
    ":RECORD_COUNT, :FLIDS, :OPERATION_DAYS, SYSTIMESTAMP)",
    _typed_binds(
        TABLES["SCHD_SNAP_LOG"], ("MESSAGE_ID", "RECORD_COUNT", "FLIDS", "OPERATION_DAYS")
    ),
)
