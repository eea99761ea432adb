"""PostgreSQL backend of flightstate: the authoritative store, its migrations.

Entry points: ``PgStore`` (``StateStore``, ``FlightReader``, ``BackfillQueue``), ``migrate``.
Quirks: ``''`` and NULL are distinct (both kept); timestamps are read back in UTC;
commits are durable (``synchronous_commit = on``). Nothing connects at import time.
"""

from __future__ import annotations

from flightstate_pg._writes import WRITE_STEPS
from flightstate_pg.migrate import migrate
from flightstate_pg.store import PgStore
from flightstate_pg.transaction import PgTransaction

__all__ = ["WRITE_STEPS", "PgStore", "PgTransaction", "migrate"]
