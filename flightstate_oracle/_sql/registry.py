# ruff: noqa: S608 - SQL is assembled from _schema.TABLES names only; every value is bound
"""The statement registry of the Oracle backend and the helpers that render statements.

Why a registry: the 11g lint and the sqlglot parse test run over exactly what the code
executes. The code never builds SQL elsewhere: ``_db.run``/``_db.run_many``/``_db.query`` take
a ``Statement`` registered here (a test checks every call site). Generated statements (the main
row MERGE, one DELETE/INSERT/SELECT per detail table) are rendered once, at import, from
``_schema.TABLES``.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from types import MappingProxyType
from typing import Final

from attrs import frozen

from flightstate_oracle._schema import Bind, Table

__all__ = [
    "IN_LIST",
    "IN_LIST_SIZE",
    "LOCK_WAIT_SECONDS",
    "MAX_SAVEPOINT_DEPTH",
    "REGISTRY",
    "Statement",
    "in_list",
    "in_list_binds",
    "insert",
    "merge",
    "register",
    "select_list",
    "top",
    "typed_binds",
    "utc",
    "value",
]


IN_LIST_SIZE: Final = 100
MAX_SAVEPOINT_DEPTH: Final = 8
LOCK_WAIT_SECONDS: Final = 30


@frozen
class Statement:
    """One SQL text and the explicit bind types its named binds need."""

    name: str
    text: str
    binds: Mapping[str, Bind]


REGISTRY: dict[str, Statement] = {}


def register(name: str, text: str, binds: Mapping[str, Bind] | None = None) -> Statement:
    """Register one statement (text normalised to single spaces) under a unique name."""
    if name in REGISTRY:
        raise ValueError(f"statement {name} registered twice")
    statement = Statement(name, " ".join(text.split()), MappingProxyType(dict(binds or {})))
    REGISTRY[name] = statement
    return statement


def typed_binds(table: Table, names: Iterable[str] | None = None) -> dict[str, Bind]:
    """The explicit bind types of ``table``'s columns (all, or ``names``) that need one."""
    wanted = set(table.names if names is None else names)
    return {c.name: c.bind for c in table.columns if c.name in wanted and c.bind is not Bind.TEXT}


def value(table: Table, name: str) -> str:
    """The bind expression writing column ``name``."""
    if table.column(name).bind is Bind.TSTZ:
        return f"FROM_TZ(:{name}, '+00:00')"
    return f":{name}"


def select_list(table: Table, names: Iterable[str], alias: str = "") -> str:
    """``names`` of ``table`` as a select list, time zone columns read back in UTC."""
    out = []
    for name in names:
        ref = f"{alias}{name}"
        out.append(
            f"SYS_EXTRACT_UTC({ref}) AS {name}" if table.column(name).bind is Bind.TSTZ else ref
        )
    return ", ".join(out)


def in_list_binds(prefix: str = "F") -> tuple[str, ...]:
    """Bind names of the fixed-size IN list."""
    return tuple(f"{prefix}{i}" for i in range(1, IN_LIST_SIZE + 1))


def in_list(prefix: str = "F") -> str:
    """``(:F1, .., :F100)``: the fixed-size IN list (unused binds are NULL, matching nothing)."""
    return "(" + ", ".join(f":{name}" for name in in_list_binds(prefix)) + ")"


IN_LIST: Final = in_list()


def merge(table: Table, key: tuple[str, ...], name: str) -> Statement:
    """The MERGE upserting one row of ``table`` by ``key`` (11g has no upsert syntax)."""
    others = [c for c in table.names if c not in key]
    using = ", ".join(f"{value(table, k)} AS {k}" for k in key)
    on = " AND ".join(f"t.{k} = s.{k}" for k in key)
    update = ", ".join(f"t.{c} = {value(table, c)}" for c in others)
    columns = ", ".join(table.names)
    values = ", ".join(f"s.{c}" if c in key else value(table, c) for c in table.names)
    text = (
        f"MERGE INTO {table.name} t USING (SELECT {using} FROM DUAL) s ON ({on}) "
        f"WHEN MATCHED THEN UPDATE SET {update} "
        f"WHEN NOT MATCHED THEN INSERT ({columns}) VALUES ({values})"
    )
    return register(name, text, typed_binds(table))


def insert(table: Table, name: str) -> Statement:
    """The INSERT of one row of ``table``, every column bound."""
    columns = ", ".join(table.names)
    values = ", ".join(value(table, c) for c in table.names)
    return register(
        name, f"INSERT INTO {table.name} ({columns}) VALUES ({values})", typed_binds(table)
    )


def utc(column: str, alias: str = "") -> str:
    """``column`` (TIMESTAMP WITH TIME ZONE) read back as UTC under its own name."""
    return f"SYS_EXTRACT_UTC({alias}{column}) AS {column}"


def top(inner: str) -> str:
    """The first ``:MAX_ROWS`` rows of an ordered query (11g: no FETCH FIRST)."""
    return f"SELECT * FROM ({inner}) WHERE ROWNUM <= :MAX_ROWS"
