"""The privileges the Oracle backend needs, derived from the statements it sends, and the
preflight that checks them on a schema (README, "Grants").

Why derived: a hand-kept grant list missed ``CREATE VIEW`` (migration 0002 creates
FLIGHT_SCHD_DISPLAY). ``required_grants`` reads statement texts; ``backend_statements`` are
all the backend sends (the statement registry, every migration step and its undo), and the
recorded run of the stand-in (tests/oracle) derives the same list from what reached the
driver. The README's list is ``render_grants()``, compared by a test.

Not privileges, but checked too: quota on the default tablespace (``TABLESPACE_QUOTA``, or
``UNLIMITED TABLESPACE``) and the database character set (``migrate.check_charset``).
``ALTER SESSION SET TIME_ZONE/NLS_*`` needs no privilege (Oracle grants it to every session).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Final

import oracledb
from attrs import frozen

from flightstate_core.domain.errors import FlightstateError
from flightstate_oracle import _sql as sql
from flightstate_oracle._db import query
from flightstate_oracle._errors import translated
from flightstate_oracle._steps import load_migrations
from flightstate_oracle.migrate import check_charset
from flightstate_oracle.session import connect, parse_oracle_url

__all__ = [
    "ALWAYS",
    "Grant",
    "backend_statements",
    "missing_grants",
    "preflight",
    "preflight_url",
    "render_grants",
    "required_grants",
]


@frozen(order=True)
class Grant:
    """A system privilege (``on`` None) or an object privilege on a SYS view (``V_$..``)."""

    privilege: str
    on: str | None = None

    def __str__(self) -> str:
        return self.privilege if self.on is None else f"{self.privilege} ON SYS.{self.on}"


#: Statement shape -> the system privilege it needs (objects in the user's own schema).
_SYSTEM_RULES: Final = (
    (re.compile(r"^\s*CREATE\s+TABLE\b", re.I), "CREATE TABLE"),
    (re.compile(r"^\s*CREATE\s+(OR\s+REPLACE\s+)?VIEW\b", re.I), "CREATE VIEW"),
    (re.compile(r"^\s*CREATE\s+SEQUENCE\b", re.I), "CREATE SEQUENCE"),
    (re.compile(r"^\s*CREATE\s+(OR\s+REPLACE\s+)?TRIGGER\b", re.I), "CREATE TRIGGER"),
    (re.compile(r"^\s*CREATE\s+(OR\s+REPLACE\s+)?(PROCEDURE|FUNCTION|PACKAGE)\b", re.I),
     "CREATE PROCEDURE"),
    (re.compile(r"^\s*CREATE\s+(OR\s+REPLACE\s+)?TYPE\b", re.I), "CREATE TYPE"),
    (re.compile(r"^\s*CREATE\s+SYNONYM\b", re.I), "CREATE SYNONYM"),
    (re.compile(r"^\s*ALTER\s+SYSTEM\b", re.I), "ALTER SYSTEM"),
    (re.compile(r"^\s*ALTER\s+SESSION\s+SET\s+(SQL_TRACE|EVENTS)\b", re.I), "ALTER SESSION"),
)  # fmt: skip
_DYNAMIC_VIEW: Final = re.compile(r"\bV\$(\w+)", re.I)
#: Every session connects.
ALWAYS: Final = (Grant("CREATE SESSION"),)
#: A system privilege that covers SELECT on every V_$ view.
_ANY_DICTIONARY: Final = "SELECT ANY DICTIONARY"


def required_grants(statements: Iterable[str]) -> tuple[Grant, ...]:
    """The grants these statement texts need, sorted, ``ALWAYS`` included."""
    found = set(ALWAYS)
    for text in statements:
        found |= {Grant(p) for pattern, p in _SYSTEM_RULES if pattern.search(text)}
        found |= {Grant("SELECT", f"V_${v.upper()}") for v in _DYNAMIC_VIEW.findall(text)}
    return tuple(sorted(found))


def backend_statements() -> list[str]:
    """Every text the backend can send: registered statements, migration steps and undo."""
    texts = [statement.text for statement in sql.REGISTRY.values()]
    for migration in load_migrations():
        texts += [t for step in migration.steps for t in (step.apply, step.undo) if t]
    return texts


def render_grants(user: str = "fs_owner", tablespace: str = "USERS") -> str:
    """The grant script for the README (and a DBA), from ``backend_statements``."""
    grants = required_grants(backend_statements())
    system = [str(g) for g in grants if g.on is None]
    lines = [f"GRANT {', '.join(system)} TO {user};"]
    lines += [f"GRANT {g} TO {user};" for g in grants if g.on is not None]
    lines.append(f"ALTER USER {user} QUOTA UNLIMITED ON {tablespace};")
    return "\n".join(lines)


def missing_grants(conn: oracledb.Connection) -> list[str]:
    """What the connected user lacks of ``required_grants(backend_statements())`` and of
    quota, one item each (empty: nothing)."""
    system = {str(r["PRIVILEGE"]) for r in query(conn, sql.GRANTED_SYSTEM_PRIVILEGES)}
    objects = {(str(r["TABLE_NAME"]), str(r["PRIVILEGE"]))
               for r in query(conn, sql.GRANTED_OBJECT_PRIVILEGES)}  # fmt: skip
    missing = []
    for grant in required_grants(backend_statements()):
        held = (
            grant.privilege in system
            if grant.on is None
            else (grant.on, grant.privilege) in objects or _ANY_DICTIONARY in system
        )
        if not held:
            missing.append(str(grant))
    quota = query(conn, sql.TABLESPACE_QUOTA)
    if int(str(quota[0]["N"])) == 0 and "UNLIMITED TABLESPACE" not in system:
        missing.append("QUOTA on the default tablespace")
    return missing


def preflight_url(url: str) -> list[str]:
    """``preflight`` on one session of the schema of ``url`` (an ``oracle://`` URL)."""
    with translated():
        conn = connect(parse_oracle_url(url))
        try:
            return preflight(conn)
        finally:
            conn.close()


def preflight(conn: oracledb.Connection) -> list[str]:
    """Everything that would stop the backend on this schema, one line each: the database
    character set, then each missing grant (empty: ready)."""
    problems = []
    with translated():
        try:
            check_charset(conn)
        except FlightstateError as exc:
            problems.append(str(exc))
        problems += [f"missing grant: {item}" for item in missing_grants(conn)]
    return problems
