"""What the schema's user may do: the preflight's reads of the data dictionary
(``flightstate_oracle.grants``). Roles count: ROLE_SYS_PRIVS / ROLE_TAB_PRIVS list what the
user's roles grant."""

from __future__ import annotations

from typing import Final

from flightstate_oracle._sql.registry import register

__all__ = [
    "GRANTED_OBJECT_PRIVILEGES",
    "GRANTED_SYSTEM_PRIVILEGES",
    "SERVER_CLOCK_UTC",
    "TABLESPACE_QUOTA",
]

GRANTED_SYSTEM_PRIVILEGES: Final = register(
    "granted_system_privileges",
    "SELECT PRIVILEGE FROM USER_SYS_PRIVS UNION SELECT PRIVILEGE FROM ROLE_SYS_PRIVS",
)
GRANTED_OBJECT_PRIVILEGES: Final = register(
    "granted_object_privileges",
    "SELECT TABLE_NAME, PRIVILEGE FROM USER_TAB_PRIVS WHERE OWNER = 'SYS' "
    "UNION SELECT TABLE_NAME, PRIVILEGE FROM ROLE_TAB_PRIVS WHERE OWNER = 'SYS'",
)
#: Quota left on the user's default tablespace (-1: unlimited).
TABLESPACE_QUOTA: Final = register(
    "tablespace_quota",
    "SELECT COUNT(*) AS N FROM USER_TS_QUOTAS q JOIN USER_USERS u "
    "ON q.TABLESPACE_NAME = u.DEFAULT_TABLESPACE WHERE q.MAX_BYTES = -1 OR q.MAX_BYTES > q.BYTES",
)

#: The server's clock as UTC (``flightstate check`` compares it with the host's).
SERVER_CLOCK_UTC: Final = register(
    "server_clock_utc", "SELECT SYS_EXTRACT_UTC(SYSTIMESTAMP) AS NOW_UTC FROM DUAL"
)
