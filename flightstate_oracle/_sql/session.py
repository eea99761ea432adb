"""Session set-up, health probe, savepoints."""

from __future__ import annotations

from typing import Final

from flightstate_oracle._sql.registry import (
    MAX_SAVEPOINT_DEPTH,
    register,
)

__all__ = [
    "DATABASE_CHARSET",
    "HEALTH_PROBE",
    "READ_ONLY",
    "ROLLBACK_TO",
    "SAVEPOINTS",
    "SESSION_SETUP",
]

SESSION_SETUP: Final = register(
    "session_setup",
    "ALTER SESSION SET TIME_ZONE = '+00:00' NLS_SORT = BINARY NLS_COMP = BINARY",
)
DATABASE_CHARSET: Final = register(
    "database_charset",
    "SELECT VALUE FROM NLS_DATABASE_PARAMETERS WHERE PARAMETER = 'NLS_CHARACTERSET'",
)
READ_ONLY: Final = register("read_only", "SET TRANSACTION READ ONLY")
#: The store's health probe (``OracleStore.ping``, the pump's retry budget).
HEALTH_PROBE: Final = register("health_probe", "SELECT 1 AS ANSWER FROM DUAL")
SAVEPOINTS: Final = tuple(
    register(f"savepoint_{d}", f"SAVEPOINT FS_SP_{d}") for d in range(1, MAX_SAVEPOINT_DEPTH + 1)
)
ROLLBACK_TO: Final = tuple(
    register(f"rollback_to_{d}", f"ROLLBACK TO SAVEPOINT FS_SP_{d}")
    for d in range(1, MAX_SAVEPOINT_DEPTH + 1)
)
