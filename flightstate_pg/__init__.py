"""PostgreSQL backend of flightstate: the authoritative store, outbox, lease, migrations.

Entry points (the same names as ``flightstate_oracle``, prefix ``Pg``): ``PgStore``
(``StateStore``, ``FlightReader``, ``BackfillQueue``), ``PgTransaction`` (also the batch
engine's ``BatchTransaction``), ``PgOutbox`` (dispatch watermark, migration 0004),
``PgLeaderLease``, ``migrate``, ``WRITE_STEPS``. Public modules, twins of Oracle's:
``store``, ``transaction``, ``outbox``, ``lease``, ``lifecycle`` (``run_cleanup``),
``requests`` (``request_schedule``, ``resend_due``, ``match_schedule_response``,
``reconcile_responses``, ``request_status``, ``schedule_response_hook``), ``operator``
(``republish``, ``flight_history``), ``migrate``, ``session`` (opening sessions:
``SessionLimits``, ``with_session_limits``, ``holder_application_name``), ``queries``
(``PgQueries``: status probes, the runner's heartbeat) and ``backend`` (``open_backend``:
the runner's ``StoreBackend``); and two without a twin: ``inbox`` (the PG-table inbox)
and ``wakeup`` (commit wake-up). Nothing connects at import time.

Quirks of this backend, and what the code does about them:

- Empty text. ``''`` and NULL are distinct: a present-but-empty text is stored as ``''``,
  absent as NULL, and a state comes back identical without a presence column.
- Identifiers and lengths. Unquoted names fold to lower case (``layout``'s upper-case names
  are used unquoted); texts are ``text``, with no length to refuse short of the server's 1 GB.
- Upserts. ``INSERT .. ON CONFLICT`` (main row, cursor, response log); PROC_STATE is a plain
  INSERT or COPY on purpose (a replay is refused by its primary key).
- Batches. ``= ANY(array)`` binds one array for any number of keys; writes of a batch or a
  large package are binary COPY (``_copy``), smaller ones one ``executemany`` per step.
- Time zones. ``timestamptz`` throughout; sessions run with ``TimeZone = 'UTC'``, so
  timestamps come back as aware UTC datetimes.
- Waits and durability. Sessions carry ``lock_timeout``, ``statement_timeout`` and
  idle-in-transaction limits (``session``): a frozen leader's lock ends, a waiter gets a
  transient error. Commits are durable (``synchronous_commit = on``) when they return.
- Commit wake-up. LISTEN/NOTIFY (``wakeup``, ``PgOutbox``'s ``CommitWatch``): a dispatcher
  in another process is woken by the pump's commit.
- Driver. psycopg 3; driver errors become core errors in one place (``_errors.translated``).
"""

from __future__ import annotations

from flightstate_pg._writes import WRITE_STEPS
from flightstate_pg.lease import PgLeaderLease
from flightstate_pg.migrate import migrate
from flightstate_pg.outbox import PgOutbox
from flightstate_pg.store import PgStore
from flightstate_pg.transaction import PgTransaction

__all__ = ["WRITE_STEPS", "PgLeaderLease", "PgOutbox", "PgStore", "PgTransaction", "migrate"]
