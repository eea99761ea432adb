"""Oracle 11g (11.2) backend of flightstate: the authoritative store, outbox, lease, migrations.

Entry points (the same names as ``flightstate_pg``, prefix ``Oracle``): ``OracleStore``
(``StateStore``, ``FlightReader``, ``BackfillQueue``), ``OracleTransaction`` (also the batch
engine's ``BatchTransaction``), ``OracleOutbox`` (dispatch watermark, migration 0004),
``OracleLeaderLease``, ``migrate``, ``WRITE_STEPS``. Public modules, twins of PostgreSQL's:
``store``, ``transaction``, ``outbox``, ``lease``, ``lifecycle`` (``run_cleanup``),
``requests`` (``request_schedule``, ``resend_due``, ``match_schedule_response``,
``reconcile_responses``, ``request_status``, ``schedule_response_hook``), ``operator``
(``republish``, ``flight_history``), ``migrate`` (re-runnable steps, ``migrate``/``rollback``),
``session`` (opening sessions: ``OracleSettings``, ``parse_oracle_url``, ``init_thick_mode``,
``create_pool``, ``connect``; every session sets MODULE, CLIENT_IDENTIFIER and
``call_timeout``), ``takeover`` (a standby ends a frozen ex-leader's sessions), ``grants``
(the privileges derived from the statements, ``preflight``), ``queries`` (``OracleQueries``)
and ``backend`` (``open_backend``: the runner's ``StoreBackend``; thick mode or one line
naming Oracle Client 19+). Nothing connects at import time.

Quirks of this backend, and what the code does about them:

- Empty text. ``''`` is NULL: a zero-length VARCHAR2/CLOB is stored as NULL, so ``""`` and
  "absent" would collapse. Rows that can hold a present-but-empty text carry an
  ``EMPTY_CODES`` column listing the codes whose value is ``""`` (detail rows: child codes
  and ``SOURCE_SEQ``; FLIGHT_SCHD: scalar codes; PROC_STATE and MSG_EVENT: their texts), so
  a state comes back identical (``_presence``). Whitespace-only texts (``" "``) are kept as
  they are. An empty FLID or lease holder cannot be stored and is refused.
- Identifiers and lengths. Every table, column, constraint, index, sequence and bind name is
  at most 30 bytes and not a reserved word (``_lint`` checks every statement and the
  migrations). VARCHAR2 holds 4000 bytes, declared in BYTE; the database character set must
  be AL32UTF8 (``migrate.check_charset``, run by ``migrate``, ``grants.preflight`` and
  ``OracleStore.check_database``: anything else is refused in one line, README
  "Character set"). A text longer than its column is refused
  with ``ValueTooLong`` (a ``PermanentError`` naming TABLE.COLUMN), never truncated; long
  texts (documents SRVT/VIPF/MAFL, MSG_EVENT payload, PROC_STATE reason) are CLOBs, bound
  as CLOBs (``setinputsizes``) so MERGE/INSERT of more than 4000 bytes works.
- Upserts. There is no ``INSERT .. ON CONFLICT``; upserts are ``MERGE``, and two sessions
  can both take the NOT MATCHED branch: the loser's ORA-00001 is retried
  (``_db.merge_many``). PROC_STATE is a plain INSERT on purpose (a replay is refused). No
  IDENTITY, no FETCH FIRST, no partial indexes, no RELEASE SAVEPOINT, no MERGE ..
  RETURNING: sequences with ``.NEXTVAL``, ROWNUM over an ordered subquery, function-based
  indexes on ``CASE .. END``, savepoints that end with the transaction, a read after MERGE.
- Batches. 1000 expressions per IN list (ORA-01795) and no arrays in SQL: batch reads use
  fixed-size IN lists of 100 binds padded with NULL, chunked; batch writes are one
  ``executemany`` (array DML) per step. No row-value ``>`` and no JSON operators: expanded
  comparisons, ``DBMS_LOB.INSTR`` pre-filters checked in Python.
- Time zones. TIMESTAMP WITH TIME ZONE columns are written from UTC through
  ``FROM_TZ(:x, '+00:00')`` and read through ``SYS_EXTRACT_UTC`` (timestamps come back as
  aware UTC datetimes); sessions run with ``TIME_ZONE '+00:00'`` and binary NLS sort. A
  primary key cannot hold TIMESTAMP WITH TIME ZONE (ORA-02329): the history twins'
  ARCHIVED_AT is a zone-less TIMESTAMP holding UTC.
- Waits and durability. ``SELECT .. FOR UPDATE WAIT 30`` on PIPELINE_LOCK: a waiter gets
  ORA-30006, a transient error. A commit returns once it is durable (Oracle's default).
- Commit wake-up. None: a dispatcher in another process finds new events at its next poll
  (``flightstate_oracle/README.md``).
- Driver. 11.2 needs python-oracledb *thick* mode (Oracle Client libraries from
  ``FLIGHTSTATE_ORACLE_CLIENT_DIR``, ``session.init_thick_mode``); thin mode only reaches
  12.1+. Driver errors become core errors in one place (``_errors.translated``).
"""

from __future__ import annotations

from flightstate_oracle._writes import WRITE_STEPS
from flightstate_oracle.lease import OracleLeaderLease
from flightstate_oracle.migrate import migrate
from flightstate_oracle.outbox import OracleOutbox
from flightstate_oracle.store import OracleStore
from flightstate_oracle.transaction import OracleTransaction

__all__ = [
    "WRITE_STEPS",
    "OracleLeaderLease",
    "OracleOutbox",
    "OracleStore",
    "OracleTransaction",
    "migrate",
]
