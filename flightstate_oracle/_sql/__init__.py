"""Every SQL statement the Oracle backend issues, by noun, in one namespace.

Call sites write ``sql.X`` (``from flightstate_oracle import _sql as sql``); the statements
live in one module per noun (``session``, ``lock``, ``proc``, ``flights``, ``events``,
``cursor``, ``lifecycle``, ``requests``, ``operator``, ``runner``, ``migration``,
``preflight``), all registered in ``registry.REGISTRY`` when this package is imported, so the
11g lint, the sqlglot parse test (``tests/oracle/test_statements.py``) and the recorded run
(``tests/oracle/test_boundary_statements.py``) see every one.

11g rules followed: MERGE instead of upsert syntax, sequences ``.NEXTVAL`` in INSERT (no
IDENTITY, no sequence defaults), ROWNUM over an ordered subquery instead of FETCH FIRST,
``SELECT .. FOR UPDATE WAIT n`` for PIPELINE_LOCK, TIMESTAMP WITH TIME ZONE written through
``FROM_TZ(:x, '+00:00')`` and read through ``SYS_EXTRACT_UTC``, fixed-size IN lists
(``IN_LIST_SIZE`` binds, padded with NULL) so the statement text never varies.

Translations of the operations from flightstate_pg (migrations 0002/0003), and why:

- ``LIMIT n`` -> ROWNUM over an ordered subquery; ``= ANY(array)`` -> fixed-size IN lists
  (chunked by the caller) or ``executemany`` with one bind row per key.
- Row-value comparison ``(OPERATION_DAY, FLID) > (:d, :f)`` (not in Oracle) -> its expansion;
  the first page has no lower bound (``:AFTER_DAY IS NULL``) because ``''`` is NULL.
- ``X <> ''`` -> ``X IS NOT NULL`` (``''`` is NULL; a present-empty code is NULL too, and
  PostgreSQL's ``<> ''`` excludes it as well).
- Partial indexes -> function-based indexes on ``CASE .. END``; the queries repeat the
  exact expression (``_NULLDAY``, ``_RESP``, ``_OPEN``, ``_UNSOL``) so the index can be used.
- ``INSERT .. ON CONFLICT DO NOTHING RETURNING`` -> MERGE with only a NOT MATCHED branch
  (row count 1 = inserted); a concurrent insert's ORA-00001 counts as "already there".
- ``RETURNING REQUEST_ID`` / identity -> the ids are taken first from the sequences.
- ``FLIDS::jsonb @> '["x"]'`` (no JSON in 11g) -> ``DBMS_LOB.INSTR`` on the JSON text as a
  pre-filter; the caller checks the decoded list exactly.
- ``SELECT .. FOR UPDATE`` waits at most ``LOCK_WAIT_SECONDS`` (ORA-30006 is transient).
"""

# One namespace for the call sites: each module lists its statements in ``__all__``.
from flightstate_oracle._sql.cursor import *  # noqa: F403
from flightstate_oracle._sql.events import *  # noqa: F403
from flightstate_oracle._sql.flights import *  # noqa: F403
from flightstate_oracle._sql.lifecycle import *  # noqa: F403
from flightstate_oracle._sql.lock import *  # noqa: F403
from flightstate_oracle._sql.migration import *  # noqa: F403
from flightstate_oracle._sql.operator import *  # noqa: F403
from flightstate_oracle._sql.preflight import *  # noqa: F403
from flightstate_oracle._sql.proc import *  # noqa: F403
from flightstate_oracle._sql.registry import *  # noqa: F403
from flightstate_oracle._sql.requests import *  # noqa: F403
from flightstate_oracle._sql.runner import *  # noqa: F403
from flightstate_oracle._sql.session import *  # noqa: F403
