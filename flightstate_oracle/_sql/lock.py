# ruff: noqa: S608 - SQL is assembled from _schema.TABLES names only; every value is bound
"""PIPELINE_LOCK: the per-transaction lock and the leader lease on the same row."""

from __future__ import annotations

from typing import Final

from flightstate_oracle._schema import Bind
from flightstate_oracle._sql.registry import (
    LOCK_WAIT_SECONDS,
    Statement,
    register,
)

__all__ = [
    "FROZEN_SESSIONS",
    "KILL_SESSION",
    "LEASE_ACQUIRE",
    "LEASE_RELEASE",
    "LEASE_STATUS",
    "LOCK_SEED",
    "LOCK_SELECT",
    "kill_session",
]

LOCK_SELECT: Final = register(
    "lock_select",
    "SELECT EPOCH FROM PIPELINE_LOCK WHERE LOCK_NAME = :LOCK_NAME "
    f"FOR UPDATE WAIT {LOCK_WAIT_SECONDS}",
)
LOCK_SEED: Final = register(
    "lock_seed",
    "MERGE INTO PIPELINE_LOCK l USING (SELECT :LOCK_NAME AS LOCK_NAME FROM DUAL) s "
    "ON (l.LOCK_NAME = s.LOCK_NAME) WHEN NOT MATCHED THEN "
    "INSERT (LOCK_NAME, EPOCH, UPDATED_AT) VALUES (s.LOCK_NAME, 0, SYSTIMESTAMP)",
)
# Take over (bump EPOCH) when free/expired/released, renew (same EPOCH) for the holder.
LEASE_ACQUIRE: Final = register(
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
LEASE_STATUS: Final = register(
    "lease_status",
    "SELECT EPOCH, HOLDER, CASE WHEN LEASE_EXPIRES_AT > SYSTIMESTAMP THEN 1 ELSE 0 END "
    "AS UNEXPIRED "
    "FROM PIPELINE_LOCK WHERE LOCK_NAME = :LOCK_NAME",
)
LEASE_RELEASE: Final = register(
    "lease_release",
    "UPDATE PIPELINE_LOCK SET HOLDER = NULL, LEASE_EXPIRES_AT = SYSTIMESTAMP, "
    "UPDATED_AT = SYSTIMESTAMP WHERE LOCK_NAME = :LOCK_NAME AND HOLDER = :HOLDER",
)

#: A frozen ex-leader's candidate sessions (``flightstate_oracle.takeover``): sessions of this
#: schema named by the expired holder's CLIENT_IDENTIFIER, not this one, and only while the
#: lease is still expired and still theirs (checked in the same statement, a consistent read
#: that never waits). Needs SELECT on V_$SESSION (README, "Grants").
FROZEN_SESSIONS: Final = register(
    "frozen_sessions",
    """SELECT s.SID, s.SERIAL# AS SERIAL_NO, s.MODULE, s.CLIENT_IDENTIFIER, s.STATUS,
      CASE WHEN s.TADDR IS NOT NULL THEN 1 ELSE 0 END AS IN_TRANSACTION,
      s.LAST_CALL_ET AS IDLE_SECONDS
    FROM V$SESSION s
    WHERE s.USERNAME = USER AND s.CLIENT_IDENTIFIER = :CLIENT_ID
      AND s.SID <> SYS_CONTEXT('USERENV', 'SID')
      AND EXISTS (SELECT 1 FROM PIPELINE_LOCK l WHERE l.LOCK_NAME = :LOCK_NAME
                  AND l.HOLDER = :EXPIRED AND l.LEASE_EXPIRES_AT <= SYSTIMESTAMP)""",
)
#: ALTER SYSTEM takes no binds: the session's two numbers are formatted as integers only
#: (``kill_session``); this registered text is the statement's shape, for the lint and grants.
_KILL_SESSION: Final = "ALTER SYSTEM KILL SESSION '{sid},{serial}' IMMEDIATE"
KILL_SESSION: Final = register("kill_session", _KILL_SESSION.format(sid=0, serial=0))


def kill_session(sid: int, serial: int) -> Statement:
    """``KILL_SESSION`` for one session (SID, SERIAL#): integers only, never text."""
    for value in (sid, serial):
        if type(value) is not int or value < 0:
            raise ValueError(f"session numbers must be non-negative integers: {value!r}")
    return Statement(KILL_SESSION.name, _KILL_SESSION.format(sid=sid, serial=serial), {})
