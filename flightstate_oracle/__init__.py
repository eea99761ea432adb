"""Oracle 11g (11.2) backend of flightstate: the authoritative store, outbox, lease, migrations.

Entry points (same names and meaning as ``flightstate_pg``): ``OracleStore``
(``StateStore``, ``FlightReader``, ``BackfillQueue``; its transactions are also
``flightstate_core.ports.BatchTransaction``s), ``OracleOutbox`` (dispatch watermark,
migration 0004), ``OracleLeaderLease``, ``migrate``; ``create_pool`` / ``init_thick_mode``
for the driver. Operations with the signatures of their PostgreSQL twins:
``flightstate_oracle.lifecycle`` (``run_cleanup``), ``.requests`` (``request_schedule``,
``resend_due``, ``match_schedule_response``, ``reconcile_responses``, ``request_status``,
``schedule_response_hook``), ``.operator`` (``republish``, ``flight_history``).
Nothing connects at import time.

Quirks of this backend, and what the code does about them:

- ``''`` is NULL. A zero-length VARCHAR2/CLOB is stored as NULL, so ``""`` and "absent"
  would collapse. Rows that can hold a present-but-empty text carry an ``EMPTY_CODES``
  column listing the codes whose value is ``""`` (detail rows: child codes and
  ``SOURCE_SEQ``; FLIGHT_SCHD: scalar codes; PROC_STATE and MSG_EVENT: their texts), so a
  state comes back identical (``presence``). Whitespace-only texts (``" "``) are kept by
  Oracle as they are. An empty FLID or lease holder cannot be stored and is refused.
- 30-byte identifiers. Every table, column, constraint, index, sequence and bind name is at
  most 30 bytes and not a reserved word; ``lint`` checks every statement and the migrations.
- 4000-byte VARCHAR2. Lengths are declared in BYTE; the database character set must be
  AL32UTF8 (``OracleStore.check_database``). A text longer than its column is refused
  with ``schema.ValueTooLong`` (a ``PermanentError`` naming TABLE.COLUMN), never truncated;
  long texts (documents SRVT/VIPF/MAFL, MSG_EVENT payload, PROC_STATE reason) are CLOBs,
  bound as CLOBs (``setinputsizes``) so MERGE/INSERT of more than 4000 bytes works.
- MERGE races. There is no ``INSERT .. ON CONFLICT``; upserts are ``MERGE``, and two
  sessions can both take the NOT MATCHED branch: the loser's ORA-00001 is retried
  (``db.merge_many``). PROC_STATE is a plain INSERT on purpose (a replay is refused).
- No IDENTITY, no FETCH FIRST, no partial indexes, no RELEASE SAVEPOINT, no MERGE ..
  RETURNING: sequences with ``.NEXTVAL``, ROWNUM over an ordered subquery, function-based
  indexes on ``CASE .. END``, savepoints that end with the transaction, a read after MERGE.
- 1000 expressions per IN list (ORA-01795), no arrays in SQL: batch reads use fixed-size
  IN lists of 100 binds padded with NULL, chunked; batch writes are one ``executemany``
  (array DML) per step. No row-value ``>`` and no JSON operators: expanded comparisons,
  ``DBMS_LOB.INSTR`` pre-filters checked in Python.
- No TIMESTAMP WITH TIME ZONE in a primary key (ORA-02329): the history twins' ARCHIVED_AT
  is a zone-less TIMESTAMP holding UTC.
- Time zones: TIMESTAMP WITH TIME ZONE columns are written from UTC through
  ``FROM_TZ(:x, '+00:00')`` and read through ``SYS_EXTRACT_UTC`` (timestamps come back as
  aware UTC datetimes); sessions run with ``TIME_ZONE '+00:00'`` and binary NLS sort.
- Driver: 11.2 needs python-oracledb *thick* mode (Oracle Client libraries from
  ``FLIGHTSTATE_ORACLE_CLIENT_DIR``); thin mode only reaches 12.1+. Driver errors become
  core errors in one place (``errors.translated``).
"""

from __future__ import annotations

from flightstate_oracle._writes import WRITE_STEPS
from flightstate_oracle.client import OracleSettings, create_pool, init_thick_mode, parse_oracle_url
from flightstate_oracle.lease import OracleLeaderLease
from flightstate_oracle.migrate import migrate
from flightstate_oracle.outbox import OracleOutbox
from flightstate_oracle.store import OracleStore
from flightstate_oracle.transaction import OracleTransaction

__all__ = [
    "WRITE_STEPS",
    "OracleLeaderLease",
    "OracleOutbox",
    "OracleSettings",
    "OracleStore",
    "OracleTransaction",
    "create_pool",
    "init_thick_mode",
    "migrate",
    "parse_oracle_url",
]
