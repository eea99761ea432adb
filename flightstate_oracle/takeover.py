"""A standby ends a frozen ex-leader's sessions on Oracle, Standard Edition included.

Why (docs/design.md, "Leadership, fencing and bounded waits"): a leader frozen (SIGSTOP, VM
pause) inside its pipeline transaction keeps the PIPELINE_LOCK row lock until the server ends
its session. Oracle's own bounds do not help on 11.2 Standard Edition: the idle-blocker limit
(``MAX_IDLE_BLOCKER_TIME``) is a Resource Manager directive (Enterprise Edition), a profile's
``IDLE_TIME`` acts only with ``RESOURCE_LIMIT=TRUE`` and ends every idle session alike, and
dead connection detection sees a live kernel. So, as ``flightstate_pg.lease`` does with
``pg_terminate_backend``, when the lease has expired and the standby's ``FOR UPDATE WAIT``
still ended in ORA-30006, the standby ends the expired holder's sessions itself:

1. it reads V$SESSION for sessions of this schema whose CLIENT_IDENTIFIER is the expired
   holder's (``session.holder_client_identifier``; every flightstate session sets MODULE
   and CLIENT_IDENTIFIER), in one statement that also re-checks the lease is still expired
   and still theirs (``sql.FROZEN_SESSIONS``);
2. it keeps only sessions that could hold the row (``sessions_to_end``): MODULE
   ``flightstate``, inside a transaction (TADDR set: ``FOR UPDATE`` opened one), and
   INACTIVE (waiting for their client: a running call would end by its ``call_timeout``);
3. ``ALTER SYSTEM KILL SESSION 'sid,serial#' IMMEDIATE`` for each (``sql.kill_session``):
   the server rolls the transaction back and frees the row lock;
4. it tries once more to take the lease (``OracleLeaderLease.try_acquire``).

Grants (README, "Grants"): SELECT on ``V_$SESSION`` and ``ALTER SYSTEM``. Without them the
standby logs one warning per try naming the grant, and waits as before. A live lease is never
touched (the standby does not even queue for its row), nor the holder's sessions outside a
transaction or inside a call. What only a server can show is listed in the README.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Mapping

import oracledb
from attrs import frozen

from flightstate_oracle import _sql as sql
from flightstate_oracle._db import query, run
from flightstate_oracle.session import MODULE

__all__ = ["SessionRow", "end_frozen_holder", "sessions_to_end"]

log = logging.getLogger(__name__)
_GRANTS = "SELECT on V_$SESSION and ALTER SYSTEM"


@frozen
class SessionRow:
    """One V$SESSION row of ``sql.FROZEN_SESSIONS``."""

    sid: int
    serial: int
    module: str | None
    client_identifier: str | None
    status: str
    in_transaction: bool
    idle_seconds: int

    @classmethod
    def of(cls, row: Mapping[str, object]) -> SessionRow:
        def text(name: str) -> str | None:
            return None if row[name] is None else str(row[name])

        return cls(int(str(row["SID"])), int(str(row["SERIAL_NO"])), text("MODULE"),
                   text("CLIENT_IDENTIFIER"), str(row["STATUS"]),
                   int(str(row["IN_TRANSACTION"])) == 1, int(str(row["IDLE_SECONDS"])))  # fmt: skip


def sessions_to_end(rows: Iterable[SessionRow], client_id: str) -> list[tuple[int, int]]:
    """(SID, SERIAL#) of the sessions that may hold the lease row for the holder named
    *client_id*: ours by MODULE, theirs by CLIENT_IDENTIFIER, idle inside a transaction."""
    return [
        (row.sid, row.serial)
        for row in rows
        if row.module == MODULE
        and row.client_identifier == client_id
        and row.in_transaction
        and row.status == "INACTIVE"
    ]


def end_frozen_holder(
    conn: oracledb.Connection, lock_name: str, expired_holder: str, client_id: str
) -> int:
    """End the sessions of *expired_holder* (CLIENT_IDENTIFIER *client_id*) that may hold
    the lease row; how many. 0 with a warning if the grants are missing."""
    params = {"CLIENT_ID": client_id, "LOCK_NAME": lock_name, "EXPIRED": expired_holder}
    try:
        rows = [SessionRow.of(row) for row in query(conn, sql.FROZEN_SESSIONS, params)]
        targets = sessions_to_end(rows, client_id)
        for sid, serial in targets:
            run(conn, sql.kill_session(sid, serial))
    except oracledb.DatabaseError as exc:
        log.warning("cannot end the sessions of expired leader %s (needs %s): %s",
                    expired_holder, _GRANTS, str(exc).splitlines()[0])  # fmt: skip
        return 0
    if targets:
        log.warning("ended %d session(s) of expired leader %s holding %s",
                    len(targets), expired_holder, lock_name)  # fmt: skip
    return len(targets)
